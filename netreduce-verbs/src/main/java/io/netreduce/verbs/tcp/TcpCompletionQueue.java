package io.netreduce.verbs.tcp;

import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import io.netreduce.verbs.support.AdaptiveSpin;
import io.netreduce.verbs.support.CompletionRing;
import java.io.IOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The TCP provider's completion queue. With threaded progress the queue pairs' reader and
 * writer threads fill it. With polled progress ({@link TcpProgress#POLL}) polling it is
 * what moves the data: each poll drives the sockets of the queue pairs attached to it; a
 * blocking poll spins on them after the last byte moved (a ring step's next message is
 * usually that close behind), then sleeps in {@code select} until one of its sockets is
 * ready, a completion is pushed from elsewhere, or an RNR backoff ends, never longer than
 * {@link #MAX_SELECT_MILLIS}.
 *
 * <p>The spin adapts ({@link AdaptiveSpin}): {@link #DEFAULT_SPIN_MICROS} µs (or the device's
 * {@link TcpVerbsProvider#SPIN_MICROS}) while waits end within about that, halved after
 * each wait that lasts much longer, down to {@link #MIN_SPIN_NANOS}. Waits that long mean the
 * peer is computing or has no core (more ranks than cores): spinning then only takes the
 * core from whoever the wait is for. Where the device was told the host has more pollers
 * than cores ({@link io.netreduce.verbs.DeviceOptions#hostPollers()}), the spin yields the
 * core on every turn, as Open MPI's progress loop does when oversubscribed (measured: a
 * 4 KiB all-reduce of 4 ranks on 2 cores, blocking at once 195 µs, spinning without
 * yielding 346 µs, Open MPI 51 µs). Measured on a 2-core host, a longer fixed spin did
 * not make the small all-reduce faster and now and then made a whole run ten times slower
 * (docs/transports.md, "How each provider behaves where they differ").
 */
final class TcpCompletionQueue extends CompletionRing {
    /**
     * Busy-polling after the last progress, before sleeping in select(), unless the device
     * sets {@link TcpVerbsProvider#SPIN_MICROS}. Short: on a host with fewer cores than
     * polling threads a longer spin takes the core from the very peer it waits for.
     */
    static final int DEFAULT_SPIN_MICROS = 50;
    /** The longest spin {@link TcpVerbsProvider#SPIN_MICROS} accepts: one second. */
    static final int MAX_SPIN_MICROS = 1_000_000;
    /** Longest sleep in select(): bounds the cost of any missed wake-up. */
    static final long MAX_SELECT_MILLIS = 1;
    private static final TcpQueuePair[] NONE = new TcpQueuePair[0];
    /** What select() reports: room in a socket's buffer lifts its writer's wait ({@link TcpFrameWriter#awaitingRoom}). */
    private static final Consumer<SelectionKey> NOTE_ROOM = key -> {
        if (key.isValid() && key.isWritable()) {
            ((TcpQueuePair) key.attachment()).writer().roomAgain();
        }
    };

    /** Queue pairs in polled progress whose completions come here; replaced on (rare) change. */
    private volatile TcpQueuePair[] attached = NONE;
    private volatile Selector selector;
    private volatile boolean selecting;
    /** One poller sleeps in select() at a time; a second one spins on progress meanwhile. */
    private final Object selectLock = new Object();
    /** Threads inside a blocking {@link #poll(WorkCompletion[], Duration)} now: they drive the attached sockets. */
    private final AtomicInteger blockingPollers = new AtomicInteger();

    /** The shortest adaptive spin. */
    static final long MIN_SPIN_NANOS = AdaptiveSpin.MIN_SPIN_NANOS;

    /** Polled progress spins on the sockets itself; the ring underneath (threaded progress) sleeps at once. */
    private final AdaptiveSpin spin;

    TcpCompletionQueue(int capacity, int spinMicros, boolean yieldWhileSpinning) {
        super(capacity);
        this.spin = new AdaptiveSpin(TimeUnit.MICROSECONDS.toNanos(spinMicros), yieldWhileSpinning);
    }

    /** The longest spin (the configured one). */
    long spinNanos() {
        return spin.spinNanos();
    }

    /** True if spinning yields the core (more pollers than cores on this host). */
    boolean yieldsWhileSpinning() {
        return spin.yieldsWhileSpinning();
    }

    /** The spin the next blocking poll starts with. */
    long spinBudgetNanos() {
        return spin.budgetNanos();
    }

    /** Adds a connected queue pair in polled progress: polling this queue now drives its socket. */
    synchronized void attach(TcpQueuePair qp, SocketChannel channel) {
        for (TcpQueuePair q : attached) {
            if (q == qp) {
                return;
            }
        }
        try {
            if (selector == null) {
                selector = Selector.open();
            }
            channel.register(selector, SelectionKey.OP_READ, qp);
        } catch (IOException e) {
            throw new VerbsException("cannot watch the connection of " + qp + " for polled progress: " + e, e);
        }
        attached = TcpQueuePair.with(attached, qp);
    }

    synchronized void detach(TcpQueuePair qp) {
        attached = TcpQueuePair.without(attached, qp);
    }

    /** Ends a poller's select() early: something it waits for happened on another thread. */
    void wakeUp() {
        Selector s = selector;
        if (selecting && s != null) {
            s.wakeup();
        }
    }

    @Override
    public boolean push(long wrId, WcStatus status, WcOpcode opcode, int byteLength, boolean hasImmediate,
                        int immediate, int qpn, String detail) {
        boolean added = super.push(wrId, status, opcode, byteLength, hasImmediate, immediate, qpn, detail);
        wakeUp(); // pushed by another thread's progress (or the fallback) while our poller sleeps
        return added;
    }

    @Override
    public int poll(WorkCompletion[] out) {
        TcpQueuePair[] qps = attached;
        if (awaitingRoom(qps)) {
            noteRoom(qps);
        }
        progress(qps);
        return super.poll(out);
    }

    /**
     * One pass over the queue pairs' sockets; true if anything moved. Queue pairs that only
     * receive (a ring's link from its left neighbour) go first: what they read frees the
     * sender's socket, and the ACK they owe leaves at once instead of after this rank's own
     * write of up to a chunk on another queue pair, which a sender past its credit waits for
     * to complete its sends (docs/benchmarks.md, "Progress order").
     */
    private static boolean progress(TcpQueuePair[] qps) {
        boolean moved = false;
        for (TcpQueuePair qp : qps) {
            if (!qp.hasSent()) {
                moved |= qp.progress();
            }
        }
        for (TcpQueuePair qp : qps) {
            if (qp.hasSent()) {
                moved |= qp.progress();
            }
        }
        return moved;
    }

    /**
     * Whether a thread is inside a blocking poll of this queue, and so drives its queue
     * pairs' sockets until it returns. It may have gone without progress for a while all the
     * same: descheduled where other work holds the cores. The device's fallback then leaves
     * these queue pairs to it ({@link PolledProgress#driveIfIdle}): the poller runs as soon
     * as a core frees, where a fallback thread would only be one more thread wanting one, and
     * would take the socket from the poller when it comes back.
     */
    boolean hasBlockingPoller() {
        return blockingPollers.get() > 0;
    }

    @Override
    public int poll(WorkCompletion[] out, Duration timeout) throws InterruptedException {
        TcpQueuePair[] qps = attached;
        if (qps.length == 0) {
            return super.poll(out, timeout);
        }
        blockingPollers.incrementAndGet();
        try {
            return pollDriving(out, timeout, qps);
        } finally {
            blockingPollers.decrementAndGet();
        }
    }

    private int pollDriving(WorkCompletion[] out, Duration timeout, TcpQueuePair[] qps) throws InterruptedException {
        long start = System.nanoTime();
        long now = start;
        long deadline = now + Math.max(0, timeout.toNanos());
        long spinFor = spin.budgetNanos();
        long spinUntil = now + spinFor;
        while (true) {
            boolean moved = false;
            if (awaitingRoom(qps)) {
                noteRoom(qps);
            }
            moved |= progress(qps);
            int n = super.poll(out);
            if (n > 0 || isClosed()) {
                spin.adapt(System.nanoTime() - start);
                return n;
            }
            now = System.nanoTime();
            if (now - deadline >= 0) {
                spin.adapt(now - start);
                return 0;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while polling a tcp completion queue");
            }
            if (moved) {
                spinUntil = now + spinFor;
            } else if (now - spinUntil < 0 && !awaitingRoom(qps)) {
                spin.pause();
            } else {
                // Nothing moved and nothing will until a socket has data or room: sleep, as
                // a blocking write does on a full buffer.
                awaitIo(qps, now, deadline);
            }
            qps = attached;
            if (qps.length == 0) {
                return super.poll(out, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            }
        }
    }

    private static boolean awaitingRoom(TcpQueuePair[] qps) {
        for (TcpQueuePair qp : qps) {
            if (qp.writer().awaitingRoom()) {
                return true;
            }
        }
        return false;
    }

    /** Asks the selector, without waiting, which full sockets have room again. */
    private void noteRoom(TcpQueuePair[] qps) {
        Selector s = selector;
        if (selecting || s == null) {
            return; // the poller in select() notes it
        }
        watch(qps, s);
        synchronized (selectLock) {
            try {
                s.selectNow(NOTE_ROOM);
            } catch (ClosedSelectorException e) {
                // closed under us: the caller's loop sees it
            } catch (IOException e) {
                throw new VerbsException("asking which tcp connections have room failed: " + e, e);
            }
        }
    }

    /** Sets each socket's interest: data always, room while its writer has something to write. */
    private static void watch(TcpQueuePair[] qps, Selector s) {
        for (TcpQueuePair qp : qps) {
            SelectionKey key = qp.selectionKey(s);
            if (key != null && key.isValid()) {
                int ops = SelectionKey.OP_READ | (qp.wantsWrite() ? SelectionKey.OP_WRITE : 0);
                if (key.interestOps() != ops) {
                    key.interestOps(ops);
                }
            }
        }
    }

    /** Sleeps until a socket of {@code qps} is ready, a completion is pushed, a timer is due, or the deadline. */
    private void awaitIo(TcpQueuePair[] qps, long now, long deadline) {
        Selector s = selector;
        long wait = deadline - now;
        for (TcpQueuePair qp : qps) {
            wait = Math.min(wait, qp.timerDueNanos() - now);
        }
        watch(qps, s);
        if (wait <= 0) {
            return;
        }
        long millis = Math.max(1, Math.min(MAX_SELECT_MILLIS, TimeUnit.NANOSECONDS.toMillis(wait)));
        synchronized (selectLock) {
            selecting = true;
            try {
                if (isEmpty()) { // re-checked after announcing the sleep: a push now wakes it
                    s.select(NOTE_ROOM, millis);
                }
            } catch (ClosedSelectorException e) {
                // the queue was closed under us: the caller's loop sees it and returns
            } catch (IOException e) {
                throw new VerbsException("waiting for tcp connections to become ready failed: " + e, e);
            } finally {
                selecting = false;
            }
        }
    }

    @Override
    public void close() {
        super.close();
        synchronized (this) {
            Selector s = selector;
            if (s != null) {
                try {
                    s.close(); // releases the sockets of queue pairs closed while registered
                } catch (IOException e) {
                    // nothing to do: the queue is gone
                }
            }
        }
    }
}
