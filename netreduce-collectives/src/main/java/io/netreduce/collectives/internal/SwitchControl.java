package io.netreduce.collectives.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netreduce.host.MessagePlan;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Client of the NetReduce switch's HTTP/JSON control plane: create a ring (its id, P,
 * window N, message payload length, MTU, dtype, lane byte order), register its connections,
 * delete it. Any non-2xx answer, including the switch refusing a ring that does not fit its
 * aggregator memory, becomes a {@link Refused} carrying the switch's own explanation.
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

    /** One RC connection of the ring: rank's toNext queue pair to its successor's fromPrev. */
    public record Connection(int rank, String src, int srcQpn, String dst, int dstQpn) {
    }

    public SwitchControl(URI base, Duration timeout) {
        this.base = base;
        this.timeout = timeout;
        this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
    }

    public void createRing(int ringId, int ranks, int window, int messageBytes, int mtu) throws Refused {
        Map<String, Object> ring = new LinkedHashMap<>();
        ring.put("ringId", Integer.toUnsignedLong(ringId));
        ring.put("ranks", ranks);
        ring.put("window", window);
        ring.put("messagePayloadLength", messageBytes);
        ring.put("mtu", mtu);
        ring.put("dtype", "fp32");
        ring.put("byteOrder", MessagePlan.PAYLOAD_ORDER == ByteOrder.LITTLE_ENDIAN ? "little" : "big");
        call("POST", "/rings", ring);
    }

    public void registerConnections(int ringId, List<Connection> connections) throws Refused {
        call("POST", "/rings/" + Integer.toUnsignedString(ringId) + "/connections", connections);
    }

    public void deleteRing(int ringId) throws Refused {
        call("DELETE", "/rings/" + Integer.toUnsignedString(ringId), null);
    }

    private JsonNode call(String method, String path, Object body) throws Refused {
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
