package io.netreduce.netswitch.control;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.netreduce.netswitch.engine.AggregationEngine;
import io.netreduce.netswitch.engine.ConnectionSpec;
import io.netreduce.netswitch.engine.RingConfig;
import io.netreduce.netswitch.engine.RingInfo;
import io.netreduce.netswitch.engine.SwitchConfigException;
import io.netreduce.wire.control.ConnectionEntry;
import io.netreduce.wire.control.ControlJson;
import io.netreduce.wire.control.ControlPaths;
import io.netreduce.wire.control.RingList;
import io.netreduce.wire.control.RingStatus;
import io.netreduce.wire.roce.Ipv4UdpHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * HTTP/JSON control plane (curl-able): create, list and delete rings, register their
 * connections, and {@code /metrics} in the Prometheus text format. Bad requests get a 4xx
 * status and a JSON body {@code {"error": "..."}} saying what was wrong. The JSON itself is
 * {@link ControlJson}'s, shared with every client.
 *
 * <pre>
 * POST   /rings                    {"ringId":7,"ranks":4,"window":2,"messagePayloadLength":65536,
 *                                   "mtu":1024,"dtype":"fp32","byteOrder":"little","connections":[...]}
 * GET    /rings                    all rings with their state
 * GET    /rings/{id}
 * DELETE /rings/{id}
 * POST   /rings/{id}/connections   {"rank":0,"src":"127.0.0.2:4791","srcQpn":17,"dst":"127.0.0.3","dstQpn":18}
 *                                   (or an array of them)
 * GET    /metrics
 * </pre>
 */
public final class ControlPlane implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControlPlane.class);
    private static final int MAX_BODY = 1 << 20;

    private final AggregationEngine engine;
    private final HttpServer server;
    private final ExecutorService executor;
    private final Metrics metrics;

    public ControlPlane(AggregationEngine engine, InetSocketAddress bind) throws IOException {
        this.engine = engine;
        this.metrics = new Metrics(engine);
        server = HttpServer.create(bind, 16);
        executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "netreduce-switch-control");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext(ControlPaths.RINGS, this::rings);
        server.createContext(ControlPaths.METRICS, this::metrics);
        server.createContext("/", ex -> respond(ex, 404, ControlJson.error("no such resource: " + ex.getRequestURI().getPath()
                + " (try /rings or /metrics)")));
        server.start();
        LOG.info("switch control plane listening on http://{}:{}/", server.getAddress().getHostString(),
                server.getAddress().getPort());
    }

    public InetSocketAddress localAddress() {
        return server.getAddress();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    private void metrics(HttpExchange ex) throws IOException {
        if (!ex.getRequestMethod().equals("GET")) {
            respond(ex, 405, ControlJson.error("use GET on /metrics"));
            return;
        }
        byte[] body = metrics.render().getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
        ex.sendResponseHeaders(200, body.length);
        try (OutputStream os = ex.getResponseBody()) {
            os.write(body);
        }
    }

    private void rings(HttpExchange ex) throws IOException {
        try {
            String path = ex.getRequestURI().getPath();
            String[] parts = path.replaceAll("/+$", "").split("/");
            String method = ex.getRequestMethod();
            // parts: ["", "rings", id?, "connections"?]
            if (parts.length == 2) {
                if (method.equals("GET")) {
                    List<RingStatus> list = new ArrayList<>();
                    for (RingInfo r : engine.rings()) {
                        list.add(status(r));
                    }
                    respond(ex, 200, ControlJson.list(new RingList(list, engine.memoryBudget(), engine.memoryUsed())));
                } else if (method.equals("POST")) {
                    createRing(ex);
                } else {
                    respond(ex, 405, ControlJson.error("use GET or POST on /rings"));
                }
                return;
            }
            int ringId = parseRingId(parts[2]);
            if (parts.length == 3) {
                if (method.equals("GET")) {
                    respond(ex, 200, ControlJson.status(status(engine.ring(ringId))));
                } else if (method.equals("DELETE")) {
                    engine.deleteRing(ringId);
                    LOG.info("ring {} deleted", Integer.toUnsignedString(ringId));
                    respond(ex, 204, null);
                } else {
                    respond(ex, 405, ControlJson.error("use GET or DELETE on /rings/{id}"));
                }
                return;
            }
            if (parts.length == 4 && parts[3].equals(ControlPaths.CONNECTIONS)) {
                if (!method.equals("POST")) {
                    respond(ex, 405, ControlJson.error("use POST on /rings/{id}/connections"));
                    return;
                }
                byte[] body = readBody(ex);
                engine.ring(ringId); // 404 before validating the body
                for (ConnectionEntry c : ControlJson.parseConnections(body)) {
                    ConnectionSpec spec = connection(c);
                    engine.addConnection(ringId, spec);
                    LOG.info("ring {}: connection {}", Integer.toUnsignedString(ringId), spec);
                }
                respond(ex, 201, ControlJson.status(status(engine.ring(ringId))));
                return;
            }
            respond(ex, 404, ControlJson.error("no such resource: " + path));
        } catch (SwitchConfigException e) {
            int status = switch (e.kind()) {
                case INVALID -> 400;
                case NOT_FOUND -> 404;
                case CONFLICT, INSUFFICIENT_MEMORY -> 409;
            };
            respond(ex, status, ControlJson.error(e.getMessage()));
        } catch (IllegalArgumentException e) { // ControlJson.BadRequest among them
            respond(ex, 400, ControlJson.error(e.getMessage()));
        } catch (RuntimeException e) {
            LOG.error("control plane request {} {} failed", ex.getRequestMethod(), ex.getRequestURI(), e);
            respond(ex, 500, ControlJson.error("internal error: " + e));
        }
    }

    private void createRing(HttpExchange ex) throws IOException {
        ControlJson.CreateRing request = ControlJson.parseCreateRing(readBody(ex));
        RingConfig config = RingConfig.of(request.spec());
        List<ConnectionSpec> specs = new ArrayList<>();
        for (ConnectionEntry c : request.connections()) {
            specs.add(connection(c));
        }
        engine.createRing(config);
        try {
            for (ConnectionSpec c : specs) {
                engine.addConnection(config.ringId(), c);
            }
        } catch (RuntimeException e) {
            engine.deleteRing(config.ringId()); // all or nothing
            throw e;
        }
        LOG.info("ring {} created: {} ranks, window {}, {} B messages, MTU {}, {}, {} of aggregator memory ({} used of {})",
                Integer.toUnsignedString(config.ringId()), config.ranks(), config.window(),
                config.messagePayloadLength(), config.mtu(), config.dtypeName(), config.aggregatorBytes(),
                engine.memoryUsed(), engine.memoryBudget());
        respond(ex, 201, ControlJson.status(status(engine.ring(config.ringId()))));
    }

    private static ConnectionSpec connection(ConnectionEntry c) {
        return new ConnectionSpec(c.rank(), Ipv4UdpHeader.toInt(c.src().getAddress()), c.src().getPort(), c.srcQpn(),
                Ipv4UdpHeader.toInt(c.dst().getAddress()), c.dst().getPort(), c.dstQpn());
    }

    private static ConnectionEntry entry(ConnectionSpec s) {
        return new ConnectionEntry(s.rank(), new InetSocketAddress(ConnectionSpec.ipString(s.srcIp()), s.srcPort()),
                s.srcQpn(), new InetSocketAddress(ConnectionSpec.ipString(s.dstIp()), s.dstPort()), s.dstQpn());
    }

    private static RingStatus status(RingInfo r) {
        List<ConnectionEntry> conns = new ArrayList<>();
        for (ConnectionSpec s : r.connections()) {
            conns.add(entry(s));
        }
        return new RingStatus(r.config().spec(), conns, r.config().packetsPerMessage(), r.aggregatorBytes(),
                r.state(), r.newestMessage() == null ? null : Integer.toUnsignedLong(r.newestMessage()),
                r.messagesCompleted(), r.aggregationsCompleted());
    }

    private static int parseRingId(String text) {
        try {
            return Integer.parseUnsignedInt(text);
        } catch (NumberFormatException e) {
            throw new ControlJson.BadRequest("ring id must be an unsigned 32-bit integer, not '" + text + "'");
        }
    }

    private byte[] readBody(HttpExchange ex) throws IOException {
        byte[] bytes;
        try (InputStream in = ex.getRequestBody()) {
            bytes = in.readNBytes(MAX_BODY + 1);
        }
        if (bytes.length > MAX_BODY) {
            throw new ControlJson.BadRequest("request body larger than " + MAX_BODY + " bytes");
        }
        return bytes;
    }

    private void respond(HttpExchange ex, int status, String body) throws IOException {
        try (ex) {
            if (body == null) {
                ex.sendResponseHeaders(status, -1);
                return;
            }
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(status, bytes.length);
            ex.getResponseBody().write(bytes);
        }
    }
}
