package io.netreduce.wire.control;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

/**
 * Client of a NetReduce switch's HTTP/JSON control plane. Any answer other than 2xx,
 * including a switch refusing a ring its aggregator memory cannot hold, and a switch that
 * cannot be reached, becomes a {@link Refused} carrying the switch's own explanation.
 */
public final class SwitchControlClient {
    private final URI base;
    private final Duration timeout;
    private final HttpClient http;

    /** The switch said no, or could not be reached; the message says which and why. */
    public static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;
        private final int status;

        Refused(String message, int status, Throwable cause) {
            super(message, cause);
            this.status = status;
        }

        /** The HTTP status the switch answered with, or 0 if it could not be reached. */
        public int status() {
            return status;
        }
    }

    public SwitchControlClient(URI base, Duration timeout) {
        this.base = base;
        this.timeout = timeout;
        this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
    }

    public URI base() {
        return base;
    }

    /** Creates a ring, registering {@code connections} with it at once (none: register them later). */
    public RingStatus createRing(RingSpec spec, List<ConnectionEntry> connections) throws Refused {
        return ControlJson.parseStatus(call("POST", ControlPaths.RINGS, ControlJson.createRing(spec, connections)));
    }

    public RingStatus registerConnections(int ringId, List<ConnectionEntry> connections) throws Refused {
        return ControlJson.parseStatus(call("POST", ControlPaths.connections(ringId),
                ControlJson.connections(connections)));
    }

    public RingStatus ring(int ringId) throws Refused {
        return ControlJson.parseStatus(call("GET", ControlPaths.ring(ringId), null));
    }

    public RingList rings() throws Refused {
        return ControlJson.parseList(call("GET", ControlPaths.RINGS, null));
    }

    public void deleteRing(int ringId) throws Refused {
        call("DELETE", ControlPaths.ring(ringId), null);
    }

    /** The switch's counters in the Prometheus text format. */
    public String metrics() throws Refused {
        return call("GET", ControlPaths.METRICS, null);
    }

    /** One request; the body of a 2xx answer, else a {@link Refused} with the switch's reason. */
    public String call(String method, String path, String body) throws Refused {
        try {
            HttpRequest.BodyPublisher pub = body == null ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body);
            HttpRequest req = HttpRequest.newBuilder(base.resolve(path)).timeout(timeout)
                    .header("Content-Type", "application/json").method(method, pub).build();
            HttpResponse<String> resp = http.send(req, HttpResponse.BodyHandlers.ofString());
            if (resp.statusCode() / 100 != 2) {
                throw new Refused("switch at " + base + " answered " + method + " " + path + " with HTTP "
                        + resp.statusCode() + ": " + ControlJson.errorText(resp.body()), resp.statusCode(), null);
            }
            return resp.body();
        } catch (IOException e) {
            throw new Refused("switch control plane at " + base + " unreachable (" + method + " " + path + "): " + e,
                    0, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Refused("interrupted while talking to the switch at " + base, 0, e);
        }
    }
}
