package io.netreduce.testkit;

import io.netreduce.verbs.QpEndpoint;
import io.netreduce.verbs.QueuePair;
import io.netreduce.wire.control.ConnectionEntry;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/** What tests tell a switch about a ring of queue pairs they built themselves. */
public final class SwitchRings {
    private SwitchRings() {
    }

    /**
     * The ring's connections: rank r's {@code toNext.get(r)} sends to rank r+1's
     * {@code fromPrev.get(r + 1)} (indices mod P).
     */
    public static List<ConnectionEntry> connections(List<QueuePair> toNext, List<QueuePair> fromPrev) {
        int p = toNext.size();
        List<ConnectionEntry> out = new ArrayList<>();
        for (int r = 0; r < p; r++) {
            QpEndpoint src = toNext.get(r).localEndpoint();
            QpEndpoint dst = fromPrev.get((r + 1) % p).localEndpoint();
            out.add(new ConnectionEntry(r, new InetSocketAddress(src.address(), src.port()), src.qpn(),
                    new InetSocketAddress(dst.address(), dst.port()), dst.qpn()));
        }
        return out;
    }
}
