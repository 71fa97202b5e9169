package io.netreduce.verbs.tcp;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The local ACK timer of one {@link TcpDevice}: a single daemon thread that checks each
 * connected queue pair for forward progress every quarter of its ACK timeout (and, in
 * polled progress, drives queue pairs nobody polls). One thread
 * per device rather than per queue pair, because a check is a few field reads under the
 * queue pair's lock and a device may carry hundreds of queue pairs.
 *
 * <p>The check runs on this thread, not on the queue pair's writer, because the writer may
 * be the very thread that is stuck: blocked inside {@code SocketChannel.write} when the
 * peer stopped reading and the socket buffers are full.
 */
final class AckTimer implements AutoCloseable {
    /** Checks never run more often than this, however short the ACK timeout. */
    static final long MIN_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private final ScheduledThreadPoolExecutor executor;

    AckTimer(String name) {
        executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** How often a queue pair with this ACK timeout is checked. */
    static long periodNanos(Duration ackTimeout) {
        return Math.max(MIN_PERIOD_NANOS, ackTimeout.toNanos() / 4);
    }

    /** Runs {@code check} every {@link #periodNanos} until the returned handle is cancelled. */
    ScheduledFuture<?> watch(Runnable check, Duration ackTimeout) {
        long period = periodNanos(ackTimeout);
        return executor.scheduleWithFixedDelay(check, period, period, TimeUnit.NANOSECONDS);
    }

    /** Runs {@code task} once, {@code delayNanos} from now. */
    ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
        return executor.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
