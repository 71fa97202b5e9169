package io.netreduce.collectives.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/**
 * Client of the NetReduce switch's HTTP/JSON control plane: create a ring (P, window,
 * message payload length, MTU, dtype), register its connections, delete it. Any non-2xx
 * answer, including the switch refusing a ring that does not fit its memory, becomes a
 * {@link Refused} carrying the switch's own explanation.
 */
public final class SwitchControl {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI base;
    private final Duration timeout;
    private final HttpClient http;

    /** The switch said no, or could not be reached; the message says which and why. */
    public static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(String message, Throwable cause) {
            super(message, cause);
        }
    }

    public SwitchControl(URI base, Duration timeout) {
        this.base = base;
        this.timeout = timeout;
        this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
    }

    /** Creates a ring and returns the id the switch gave it. */
    public int createRing(int ranks, int window, int messageBytes, int mtu, String dtype) throws Refused {
        JsonNode reply = call("POST", "/rings", Map.of("ranks", ranks, "window", window, "messageBytes", messageBytes,
                "mtu", mtu, "dtype", dtype));
        if (!reply.has("ringId")) {
            throw new Refused("switch at " + base + " created a ring but returned no ringId: " + reply, null);
        }
        return reply.get("ringId").asInt();
    }

    /** Tells the switch that datagrams from {@code src} to {@code dst} carry DestQP {@code destQp}. */
    public void registerConnection(int ringId, int rank, String src, String dst, int destQp) throws Refused {
        call("POST", "/rings/" + ringId + "/connections", Map.of("rank", rank, "src", src, "dst", dst,
                "destQp", destQp));
    }

    public void deleteRing(int ringId) throws Refused {
        call("DELETE", "/rings/" + ringId, null);
    }

    private JsonNode call(String method, String path, Map<String, Object> body) throws Refused {
        try {
            HttpRequest.BodyPublisher pub = body == null ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body));
            HttpRequest req = HttpRequest.newBuilder(base.resolve(path)).timeout(timeout)
                    .header("Content-Type", "application/json").method(method, pub).build();
            HttpResponse<String> resp = http.send(req, HttpResponse.BodyHandlers.ofString());
            if (resp.statusCode() / 100 != 2) {
                throw new Refused("switch at " + base + " answered " + method + " " + path + " with HTTP "
                        + resp.statusCode() + ": " + resp.body(), null);
            }
            return resp.body().isBlank() ? JSON.createObjectNode() : JSON.readTree(resp.body());
        } catch (IOException e) {
            throw new Refused("switch control plane at " + base + " unreachable (" + method + " " + path + "): " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Refused("interrupted while talking to the switch at " + base, e);
        }
    }
}
