package io.netreduce.verbs.soft;

import io.netreduce.verbs.support.FallbackProgress;
import io.netreduce.wire.udp.NativeUdp;
import io.netty.channel.EventLoop;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the polling caller runs a soft device's protocol ({@value SoftProperties#PROGRESS}
 * {@code =caller}): the lock that whoever runs the protocol holds (a poller, a poster, or
 * the event loop), a blocking poller's sleep on the device socket and the eventfd that ends
 * it, and the event loop's drive of a device nobody drives. What one drive does is the
 * device's ({@link Drive}).
 */
final class CallerProgress {
    private static final Logger LOG = LoggerFactory.getLogger(CallerProgress.class);
    /** Longest sleep of a blocking poll in one go (a wake-up or a datagram ends it sooner). */
    private static final int MAX_SLEEP_MILLIS = 50;

    /** One drive of the device, under the lock; true if datagrams arrived. */
    interface Drive {
        /** {@code keepAcks}: a caller drives, who may still make the next move (see the device's drive). */
        boolean run(boolean keepAcks);
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final Drive drive;
    private final int socket;
    private final int waker;
    private final String device;
    private final AtomicInteger sleepers = new AtomicInteger();
    private volatile long lastDrivenNanos = System.nanoTime();
    /** When the earliest queue-pair timer is due, as the last drive found it: a sleeper wakes for it. */
    private volatile long timersDueNanos = Long.MAX_VALUE;
    private volatile boolean closed;
    private EventLoop loop;
    /** Event loop only: {@link #lastDrivenNanos} as its own last drive left it. */
    private long ownDriveNanos = Long.MIN_VALUE;

    /** {@code socket}: the device's receive socket, which a sleeping poller waits on. */
    CallerProgress(int socket, Drive drive, String device) {
        this.socket = socket;
        this.drive = drive;
        this.device = device;
        this.waker = NativeUdp.waker();
    }

    /**
     * Starts the event loop's looks: it drives a device that nobody drove for
     * {@link FallbackProgress#IDLE_NANOS} (a peer of an application that computes instead of
     * polling is slowed, never stalled), as the tcp provider's polled progress does.
     */
    void start(EventLoop loop) {
        this.loop = loop;
        lookIn(FallbackProgress.IDLE_NANOS);
    }

    private void lookIn(long nanos) {
        try {
            loop.schedule(this::look, nanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            LOG.debug("soft device {}: no idle progress, the event loop is shutting down", device);
        }
    }

    /** {@code task} as the event loop must run it: under the lock. */
    Runnable guarded(Runnable task) {
        return () -> locked(task);
    }

    void locked(Runnable task) {
        lock.lock();
        try {
            task.run();
        } finally {
            lock.unlock();
        }
    }

    /** Runs {@code task} at once if no other thread runs the protocol; false if one does. */
    boolean tryRun(Runnable task) {
        if (!lock.tryLock()) {
            return false;
        }
        try {
            task.run();
        } finally {
            lock.unlock();
        }
        return true;
    }

    /** One turn of progress by a poller; false at once if another thread runs the protocol. */
    boolean drive() {
        if (closed || !lock.tryLock()) {
            return false;
        }
        try {
            return drive.run(true);
        } finally {
            lock.unlock();
        }
    }

    /** Told by every drive: when it ran, and when the earliest timer is due (Long.MAX_VALUE: none). */
    void driven(long now, long timersDue) {
        lastDrivenNanos = now;
        timersDueNanos = timersDue;
    }

    private void look() {
        if (closed) {
            return;
        }
        long last = lastDrivenNanos;
        long sinceDriven = System.nanoTime() - last;
        if (sinceDriven < FallbackProgress.IDLE_NANOS && last != ownDriveNanos) {
            // Its callers drive it. Looking again after the longest wait, not when their last
            // drive turns idle, wakes the event loop a third as often while they keep at it.
            lookIn(Math.max(FallbackProgress.IDLE_NANOS - sinceDriven, FallbackProgress.LONGEST_LOOK_NANOS));
            return;
        }
        lookIn(FallbackProgress.IDLE_NANOS);
        if (sinceDriven < FallbackProgress.IDLE_NANOS) {
            return; // its own last drive, not yet that old
        }
        lock.lock();
        try {
            if (!closed) {
                drive.run(false); // nobody is there to make the next move
                ownDriveNanos = lastDrivenNanos;
            }
        } catch (RuntimeException e) {
            // The next look is scheduled already: keep the device driven.
            LOG.error("soft device {}: idle progress failed", device, e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * A blocking poller with nothing to do sleeps here: until a datagram arrives, another
     * thread pushes a completion ({@link #wakeSleepers()}), the earliest timer is due, or
     * {@code nanos} pass; unless {@code cq} already has a completion. {@code beforeSleep}
     * runs first, under the lock if it is free (what must not wait for the sleep to end).
     */
    void sleep(long nanos, SoftCompletionQueue cq, Runnable beforeSleep) {
        long due = timersDueNanos;
        long until = due == Long.MAX_VALUE ? nanos : Math.min(nanos, due - System.nanoTime());
        if (until <= 0) {
            return;
        }
        int millis = (int) Math.max(1, Math.min(MAX_SLEEP_MILLIS, TimeUnit.NANOSECONDS.toMillis(until)));
        tryRun(beforeSleep);
        sleepers.incrementAndGet();
        try {
            if (!closed && cq.empty()) { // re-checked after announcing the sleep: a push now wakes it
                NativeUdp.awaitReadable(socket, waker, millis);
            }
        } finally {
            sleepers.decrementAndGet();
        }
    }

    /** Ends the sleep of pollers in {@link #sleep}: a completion was pushed or the device closes. */
    void wakeSleepers() {
        if (sleepers.get() > 0) {
            NativeUdp.wake(waker);
        }
    }

    /** Stops driving and wakes every sleeper; when this returns, none waits on the socket any more. */
    void close() {
        closed = true;
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (sleepers.get() > 0 && System.nanoTime() - until < 0) {
            NativeUdp.wake(waker);
            Thread.onSpinWait();
        }
        NativeUdp.close(waker);
    }
}
