package io.netreduce.verbs.soft;

import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import io.netreduce.verbs.support.AdaptiveSpin;
import io.netreduce.verbs.support.CompletionRing;
import java.time.Duration;

/**
 * The soft provider's completion queue (one short, uncontended lock per completion, never
 * per packet). Where the event loop runs the protocol it adds the completions and a
 * blocking poll spins, then sleeps on the queue. Where callers drive
 * ({@link SoftDevice#callerDrives()}), polling is what runs the protocol: each poll drives
 * the device, and a blocking poll spins on it adaptively ({@link AdaptiveSpin}) while
 * datagrams keep coming, then sleeps on the device's socket.
 */
final class SoftCompletionQueue extends CompletionRing {
    private final SoftDevice device;
    private final AdaptiveSpin spin;

    SoftCompletionQueue(SoftDevice device, int capacity, AdaptiveSpin spin) {
        super(capacity, spin);
        this.device = device;
        this.spin = spin;
    }

    SoftDevice device() {
        return device;
    }

    boolean empty() {
        return isEmpty();
    }

    @Override
    public boolean push(long wrId, WcStatus status, WcOpcode opcode, int byteLength, boolean hasImmediate,
                        int immediate, int qpn, String detail) {
        boolean added = super.push(wrId, status, opcode, byteLength, hasImmediate, immediate, qpn, detail);
        if (device.callerDrives()) {
            device.wakeSleepers(); // pushed by another thread's drive while our poller sleeps
        }
        return added;
    }

    @Override
    public int poll(WorkCompletion[] out) {
        if (device.callerDrives()) {
            device.drive();
        }
        return super.poll(out);
    }

    @Override
    public int poll(WorkCompletion[] out, Duration timeout) throws InterruptedException {
        if (!device.callerDrives()) {
            return super.poll(out, timeout);
        }
        long start = System.nanoTime();
        long deadline = start + Math.max(0, timeout.toNanos());
        long spinFor = spin.budgetNanos();
        long spinUntil = start + spinFor;
        while (true) {
            boolean moved = device.drive();
            int n = super.poll(out);
            long now = System.nanoTime();
            if (n > 0 || isClosed()) {
                spin.adapt(now - start);
                return n;
            }
            if (now - deadline >= 0) {
                spin.adapt(now - start);
                return 0;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while polling a soft completion queue");
            }
            if (moved) {
                spinUntil = now + spinFor;
            } else if (now - spinUntil < 0) {
                spin.pause();
            } else {
                device.sleep(deadline - now, this);
            }
        }
    }

    @Override
    public void close() {
        super.close();
        if (device.callerDrives()) {
            device.wakeSleepers();
        }
    }
}
