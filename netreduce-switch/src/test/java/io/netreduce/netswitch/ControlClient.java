package io.netreduce.netswitch;

import io.netreduce.netswitch.engine.ConnectionSpec;
import io.netreduce.wire.control.ConnectionEntry;
import io.netreduce.wire.control.ControlJson;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.time.Duration;

/** Talks to a running switch's control plane over real HTTP, as curl would. */
public final class ControlClient {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;

    public ControlClient(InetSocketAddress control) {
        base = "http://" + control.getHostString() + ":" + control.getPort();
    }

    public HttpResponse<String> request(String method, String path, String body) throws IOException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10));
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        try {
            return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /** JSON for creating a ring with all of a fixture's connections, as any client writes it. */
    public static String ringJson(RingFixture f) {
        List<ConnectionEntry> connections = new ArrayList<>();
        for (int r = 0; r < f.config.ranks(); r++) {
            ConnectionSpec k = f.connection(r);
            connections.add(new ConnectionEntry(r, new InetSocketAddress(ConnectionSpec.ipString(k.srcIp()), k.srcPort()),
                    k.srcQpn(), new InetSocketAddress(ConnectionSpec.ipString(k.dstIp()), k.dstPort()), k.dstQpn()));
        }
        return ControlJson.createRing(f.config.spec(), connections);
    }

    /** Value of an unlabelled metric, or of {@code name{labels}} in a /metrics page. */
    public static long metric(String page, String nameWithLabels) {
        for (String line : page.split("\n")) {
            if (line.startsWith(nameWithLabels + " ")) {
                return Long.parseLong(line.substring(nameWithLabels.length() + 1).trim());
            }
        }
        throw new AssertionError("metric " + nameWithLabels + " missing from:\n" + page);
    }
}
