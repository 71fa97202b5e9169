package io.netreduce.verbs;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Objects;

/**
 * What a peer needs to connect to a queue pair, exchanged out of band (rendezvous, a
 * file, a command line): the device's address and port, the queue-pair number and the
 * first packet sequence number the queue pair will send.
 *
 * <p>Its text form {@code address:port/qpn/psn} (numbers in decimal) round-trips through
 * {@link #parse(String)}.
 */
public record QpEndpoint(InetAddress address, int port, int qpn, int initialPsn) {

    public QpEndpoint {
        Objects.requireNonNull(address, "address");
        if (port < 0 || port > 0xFFFF) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
        if ((qpn & ~0xFFFFFF) != 0) {
            throw new IllegalArgumentException("QPN must fit 24 bits: " + qpn);
        }
        if ((initialPsn & ~0xFFFFFF) != 0) {
            throw new IllegalArgumentException("initial PSN must fit 24 bits: " + initialPsn);
        }
    }

    @Override
    public String toString() {
        return address.getHostAddress() + ":" + port + "/" + qpn + "/" + initialPsn;
    }

    /** Parses the form written by {@link #toString()}. */
    public static QpEndpoint parse(String text) {
        try {
            int colon = text.lastIndexOf(':');
            String[] rest = text.substring(colon + 1).split("/");
            if (colon <= 0 || rest.length != 3) {
                throw new IllegalArgumentException("expected address:port/qpn/psn");
            }
            return new QpEndpoint(InetAddress.getByName(text.substring(0, colon)),
                    Integer.parseInt(rest[0]), Integer.parseInt(rest[1]), Integer.parseInt(rest[2]));
        } catch (UnknownHostException | RuntimeException e) {
            throw new IllegalArgumentException("not a queue-pair endpoint '" + text + "': " + e.getMessage(), e);
        }
    }
}
