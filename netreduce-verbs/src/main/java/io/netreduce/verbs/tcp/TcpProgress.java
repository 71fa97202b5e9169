package io.netreduce.verbs.tcp;

import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.VerbsException;
import java.util.Locale;

/**
 * Who moves a TCP queue pair's bytes.
 *
 * <ul>
 *   <li>{@link #THREADS} (the provider's default): a reader and a writer thread per
 *       connected queue pair, blocking on the socket. Progress never depends on the
 *       application, as with an RDMA NIC: a passive RDMA WRITE target that never polls
 *       still receives at full speed. Each message crosses threads on its way to the
 *       poller, which costs context switches.</li>
 *   <li>{@link #POLL}: no threads of its own. Whoever polls a completion queue drives the
 *       non-blocking sockets of the queue pairs attached to it (spinning briefly, then
 *       waiting in {@code select}); the data is read and written on the polling thread, as
 *       Open MPI's and Gloo's TCP transports do. An application must therefore poll (or
 *       block on) the completion queue of every queue pair it expects progress from. A
 *       device task drives queue pairs nobody has polled for
 *       {@link io.netreduce.verbs.support.FallbackProgress#IDLE_NANOS}, so a peer is never
 *       stalled for good, only slowed. The communicators ask for this mode ({@link DeviceOptions#callerPolls()}):
 *       their ring polls one completion queue for both of its queue pairs.</li>
 * </ul>
 *
 * Chosen per device by the option {@value TcpVerbsProvider#PROGRESS}, else the system
 * property of the same name, else the environment variable
 * {@value TcpVerbsProvider#PROGRESS_ENVIRONMENT}, else {@link #POLL} when the device's
 * options say the caller polls ({@link DeviceOptions#callerPolls()}), else {@link #THREADS}.
 */
enum TcpProgress {
    THREADS,
    POLL;

    static final TcpSetting SETTING = new TcpSetting(TcpVerbsProvider.PROGRESS, TcpVerbsProvider.PROGRESS_ENVIRONMENT);
    static final TcpProgress DEFAULT = THREADS;

    /** The strategy that moves {@code qp}'s bytes in this mode. */
    TcpProgressDriver driverFor(TcpQueuePair qp, TcpCompletionQueue sendCq, TcpCompletionQueue recvCq) {
        return this == POLL ? new PolledProgress(qp, sendCq, recvCq) : new ThreadedProgress(qp);
    }

    static TcpProgress of(DeviceOptions options) {
        String value = SETTING.value(options);
        if (value == null) {
            return options.callerPolls() ? POLL : DEFAULT;
        }
        switch (value.toLowerCase(Locale.ROOT)) {
            case "threads":
                return THREADS;
            case "poll":
                return POLL;
            default:
                throw new VerbsException("unknown tcp progress mode '" + value + "' in " + SETTING.source(options)
                        + ": use 'poll' (the polling thread moves the data) or 'threads' (a reader and a writer "
                        + "thread per queue pair)");
        }
    }
}
