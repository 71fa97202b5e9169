package io.netreduce.cli;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** "host:port" and "host" arguments, with errors that quote what the user typed. */
public final class Addresses {
    private Addresses() {
    }

    /** Parses "host:port", or "host" with {@code defaultPort}. */
    public static InetSocketAddress parse(String text, int defaultPort) {
        String host = text.trim();
        int port = defaultPort;
        int colon = host.lastIndexOf(':');
        if (colon >= 0 && host.indexOf(':') == colon) {
            try {
                port = Integer.parseInt(host.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad port in '" + text + "' (expected host:port)");
            }
            host = host.substring(0, colon);
        }
        if (port < 0 || port > 0xFFFF) {
            throw new IllegalArgumentException("port out of range in '" + text + "'");
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host.isEmpty() ? "127.0.0.1" : host), port);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("unknown host in '" + text + "'");
        }
    }

    public static String format(InetSocketAddress a) {
        return a.getAddress().getHostAddress() + ":" + a.getPort();
    }
}
