package io.netreduce.verbs.tcp;

import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.VerbsException;
import java.util.Locale;

/**
 * Who moves a TCP queue pair's bytes.
 *
 * <ul>
 *   <li>{@link #THREADS}: a reader and a writer thread per connected queue pair, blocking
 *       on the socket. Progress never depends on the application; each message crosses
 *       threads on its way to the poller, which costs context switches.</li>
 *   <li>{@link #POLL}: no threads of its own. Whoever polls a completion queue drives the
 *       non-blocking sockets of its queue pairs (spinning briefly, then waiting in
 *       {@code select}); the data is read and written on the polling thread, as Open MPI's
 *       and Gloo's TCP transports do. A device task drives queue pairs nobody has polled
 *       for {@link TcpDevice#FALLBACK_IDLE_NANOS}, so a peer is never stalled for good by an
 *       application that stops polling.</li>
 * </ul>
 *
 * Chosen per device by the option {@value #OPTION}, else the system property
 * {@value #SYSTEM_PROPERTY}, else the environment variable {@value #ENVIRONMENT}.
 */
enum TcpProgress {
    THREADS,
    POLL;

    static final String OPTION = "progress";
    static final String SYSTEM_PROPERTY = "netreduce.tcp.progress";
    static final String ENVIRONMENT = "NETREDUCE_TCP_PROGRESS";
    static final TcpProgress DEFAULT = POLL;

    static TcpProgress of(DeviceOptions options) {
        String value = options.properties().get(OPTION);
        String source = "device option '" + OPTION + "'";
        if (value == null) {
            value = System.getProperty(SYSTEM_PROPERTY);
            source = "system property " + SYSTEM_PROPERTY;
        }
        if (value == null) {
            value = System.getenv(ENVIRONMENT);
            source = "environment variable " + ENVIRONMENT;
        }
        if (value == null || value.isBlank()) {
            return DEFAULT;
        }
        switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "threads":
                return THREADS;
            case "poll":
                return POLL;
            default:
                throw new VerbsException("unknown tcp progress mode '" + value + "' in " + source
                        + ": use 'poll' (the polling thread moves the data) or 'threads' (a reader and a writer "
                        + "thread per queue pair)");
        }
    }
}
