package io.netreduce.netswitch;

import io.netreduce.netswitch.engine.ConnectionSpec;
import io.netreduce.netswitch.engine.RingConfig;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteOrder;
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

    /** JSON for creating a ring with all of a fixture's connections. */
    public static String ringJson(RingFixture f) {
        RingConfig c = f.config;
        StringBuilder s = new StringBuilder();
        s.append("{\"ringId\":").append(Integer.toUnsignedLong(c.ringId()))
                .append(",\"ranks\":").append(c.ranks())
                .append(",\"window\":").append(c.window())
                .append(",\"messagePayloadLength\":").append(c.messagePayloadLength())
                .append(",\"mtu\":").append(c.mtu())
                .append(",\"dtype\":\"").append(c.dtypeName()).append('"')
                .append(",\"byteOrder\":\"").append(c.byteOrder() == ByteOrder.LITTLE_ENDIAN ? "little" : "big")
                .append("\",\"connections\":[");
        for (int r = 0; r < c.ranks(); r++) {
            ConnectionSpec k = f.connection(r);
            if (r > 0) {
                s.append(',');
            }
            s.append("{\"rank\":").append(r)
                    .append(",\"src\":\"").append(ConnectionSpec.ipString(k.srcIp())).append(':').append(k.srcPort())
                    .append("\",\"srcQpn\":").append(k.srcQpn())
                    .append(",\"dst\":\"").append(ConnectionSpec.ipString(k.dstIp())).append(':').append(k.dstPort())
                    .append("\",\"dstQpn\":").append(k.dstQpn()).append('}');
        }
        return s.append("]}").toString();
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
