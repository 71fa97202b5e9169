package io.netreduce.netswitch.control;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.netreduce.netswitch.engine.AggregationEngine;
import io.netreduce.netswitch.engine.ConnectionSpec;
import io.netreduce.netswitch.engine.RingConfig;
import io.netreduce.netswitch.engine.RingInfo;
import io.netreduce.netswitch.engine.SwitchConfigException;
import io.netreduce.verbs.roce.InaHeader;
import io.netreduce.verbs.roce.Ipv4UdpHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * HTTP/JSON control plane (curl-able): create, list and delete rings, register their
 * connections, and {@code /metrics} in the Prometheus text format. Bad requests get a 4xx
 * status and a JSON body {@code {"error": "..."}} saying what was wrong.
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
    private static final Set<String> RING_FIELDS = Set.of("ringId", "ranks", "window", "messagePayloadLength",
            "mtu", "dtype", "byteOrder", "connections");
    private static final Set<String> CONNECTION_FIELDS = Set.of("rank", "src", "srcQpn", "dst", "dstQpn");

    private final AggregationEngine engine;
    private final HttpServer server;
    private final ExecutorService executor;
    private final ObjectMapper json = new ObjectMapper();
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
        server.createContext("/rings", this::rings);
        server.createContext("/metrics", this::metrics);
        server.createContext("/", ex -> respond(ex, 404, error("no such resource: " + ex.getRequestURI().getPath()
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
            respond(ex, 405, error("use GET on /metrics"));
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
                    ArrayNode list = json.createArrayNode();
                    for (RingInfo r : engine.rings()) {
                        list.add(ringJson(r));
                    }
                    ObjectNode body = json.createObjectNode();
                    body.set("rings", list);
                    body.put("memoryBudget", engine.memoryBudget());
                    body.put("memoryUsed", engine.memoryUsed());
                    respond(ex, 200, body);
                } else if (method.equals("POST")) {
                    createRing(ex);
                } else {
                    respond(ex, 405, error("use GET or POST on /rings"));
                }
                return;
            }
            int ringId = parseRingId(parts[2]);
            if (parts.length == 3) {
                if (method.equals("GET")) {
                    respond(ex, 200, ringJson(engine.ring(ringId)));
                } else if (method.equals("DELETE")) {
                    engine.deleteRing(ringId);
                    LOG.info("ring {} deleted", Integer.toUnsignedString(ringId));
                    respond(ex, 204, null);
                } else {
                    respond(ex, 405, error("use GET or DELETE on /rings/{id}"));
                }
                return;
            }
            if (parts.length == 4 && parts[3].equals("connections")) {
                if (!method.equals("POST")) {
                    respond(ex, 405, error("use POST on /rings/{id}/connections"));
                    return;
                }
                JsonNode body = readBody(ex);
                engine.ring(ringId); // 404 before validating the body
                registerConnections(ringId, body);
                respond(ex, 201, ringJson(engine.ring(ringId)));
                return;
            }
            respond(ex, 404, error("no such resource: " + path));
        } catch (BadRequest e) {
            respond(ex, 400, error(e.getMessage()));
        } catch (SwitchConfigException e) {
            int status = switch (e.kind()) {
                case INVALID -> 400;
                case NOT_FOUND -> 404;
                case CONFLICT, INSUFFICIENT_MEMORY -> 409;
            };
            respond(ex, status, error(e.getMessage()));
        } catch (IllegalArgumentException e) {
            respond(ex, 400, error(e.getMessage()));
        } catch (RuntimeException e) {
            LOG.error("control plane request {} {} failed", ex.getRequestMethod(), ex.getRequestURI(), e);
            respond(ex, 500, error("internal error: " + e));
        }
    }

    private void createRing(HttpExchange ex) throws IOException {
        JsonNode body = readBody(ex);
        requireObject(body, "ring");
        checkFields(body, RING_FIELDS, "ring");
        RingConfig config = new RingConfig(
                intField(body, "ringId", null),
                intField(body, "ranks", null),
                intField(body, "window", null),
                intField(body, "messagePayloadLength", null),
                intField(body, "mtu", 1024),
                dtype(body.path("dtype")),
                byteOrder(body.path("byteOrder")));
        JsonNode conns = body.get("connections");
        ConnectionSpec[] specs = conns == null ? new ConnectionSpec[0] : parseConnections(conns);
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
        respond(ex, 201, ringJson(engine.ring(config.ringId())));
    }

    private void registerConnections(int ringId, JsonNode body) {
        for (ConnectionSpec c : parseConnections(body)) {
            engine.addConnection(ringId, c);
            LOG.info("ring {}: connection {}", Integer.toUnsignedString(ringId), c);
        }
    }

    private ConnectionSpec[] parseConnections(JsonNode node) {
        if (node.isObject()) {
            return new ConnectionSpec[] {parseConnection(node, -1)};
        }
        if (!node.isArray()) {
            throw new BadRequest("connections must be an object or an array of objects");
        }
        ConnectionSpec[] out = new ConnectionSpec[node.size()];
        for (int i = 0; i < node.size(); i++) {
            out[i] = parseConnection(node.get(i), i);
        }
        return out;
    }

    private ConnectionSpec parseConnection(JsonNode c, int index) {
        String where = index < 0 ? "connection" : "connections[" + index + "]";
        requireObject(c, where);
        checkFields(c, CONNECTION_FIELDS, where);
        int rank = intField(c, "rank", index < 0 ? null : index);
        InetSocketAddress src = address(c, "src", where);
        InetSocketAddress dst = address(c, "dst", where);
        try {
            return new ConnectionSpec(rank, Ipv4UdpHeader.toInt(src.getAddress()), src.getPort(),
                    intField(c, "srcQpn", null), Ipv4UdpHeader.toInt(dst.getAddress()), dst.getPort(),
                    intField(c, "dstQpn", null));
        } catch (IllegalArgumentException e) {
            throw new BadRequest(where + ": " + e.getMessage());
        }
    }

    private static InetSocketAddress address(JsonNode c, String field, String where) {
        JsonNode n = c.get(field);
        if (n == null || !n.isTextual()) {
            throw new BadRequest(where + "." + field + " must be a string \"ipv4[:port]\"");
        }
        String text = n.asText();
        String host = text;
        int port = 4791;
        int colon = text.lastIndexOf(':');
        if (colon >= 0) {
            host = text.substring(0, colon);
            try {
                port = Integer.parseInt(text.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new BadRequest(where + "." + field + ": bad port in '" + text + "'");
            }
        }
        if (!host.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
            throw new BadRequest(where + "." + field + ": '" + text + "' is not a dotted IPv4 address");
        }
        try {
            InetAddress a = InetAddress.getByName(host);
            if (port <= 0 || port > 0xFFFF) {
                throw new BadRequest(where + "." + field + ": port out of range in '" + text + "'");
            }
            return new InetSocketAddress(a, port);
        } catch (UnknownHostException e) {
            throw new BadRequest(where + "." + field + ": '" + text + "' is not an IPv4 address");
        }
    }

    private static int dtype(JsonNode n) {
        if (n.isMissingNode() || n.isNull()) {
            return InaHeader.DTYPE_FP32;
        }
        if (n.isInt()) {
            return n.asInt();
        }
        switch (n.asText().toLowerCase(java.util.Locale.ROOT)) {
            case "fp32":
            case "float32":
                return InaHeader.DTYPE_FP32;
            case "int32":
                return InaHeader.DTYPE_INT32;
            default:
                throw new BadRequest("dtype must be \"fp32\" or \"int32\", not " + n);
        }
    }

    private static ByteOrder byteOrder(JsonNode n) {
        if (n.isMissingNode() || n.isNull()) {
            return ByteOrder.LITTLE_ENDIAN;
        }
        switch (n.asText().toLowerCase(java.util.Locale.ROOT)) {
            case "little":
                return ByteOrder.LITTLE_ENDIAN;
            case "big":
                return ByteOrder.BIG_ENDIAN;
            default:
                throw new BadRequest("byteOrder must be \"little\" or \"big\", not " + n);
        }
    }

    private static int intField(JsonNode o, String field, Integer defaultValue) {
        JsonNode n = o.get(field);
        if (n == null || n.isNull()) {
            if (defaultValue == null) {
                throw new BadRequest("missing field '" + field + "'");
            }
            return defaultValue;
        }
        if (field.equals("ringId") && n.canConvertToLong() && n.isIntegralNumber()
                && n.asLong() >= 0 && n.asLong() <= 0xFFFFFFFFL) {
            return (int) n.asLong();
        }
        if (!n.isInt()) {
            throw new BadRequest("field '" + field + "' must be an integer, not " + n);
        }
        return n.asInt();
    }

    private static void requireObject(JsonNode n, String what) {
        if (n == null || !n.isObject()) {
            throw new BadRequest(what + " must be a JSON object");
        }
    }

    private static void checkFields(JsonNode o, Set<String> known, String what) {
        for (Iterator<String> it = o.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!known.contains(f)) {
                throw new BadRequest("unknown field '" + f + "' in " + what + "; known: " + known);
            }
        }
    }

    private static int parseRingId(String text) {
        try {
            return Integer.parseUnsignedInt(text);
        } catch (NumberFormatException e) {
            throw new BadRequest("ring id must be an unsigned 32-bit integer, not '" + text + "'");
        }
    }

    private JsonNode readBody(HttpExchange ex) throws IOException {
        byte[] bytes;
        try (InputStream in = ex.getRequestBody()) {
            bytes = in.readNBytes(MAX_BODY + 1);
        }
        if (bytes.length > MAX_BODY) {
            throw new BadRequest("request body larger than " + MAX_BODY + " bytes");
        }
        if (bytes.length == 0) {
            throw new BadRequest("empty request body; expected JSON");
        }
        try {
            return json.readTree(bytes);
        } catch (JsonProcessingException e) {
            throw new BadRequest("malformed JSON: " + e.getOriginalMessage());
        }
    }

    private ObjectNode ringJson(RingInfo r) {
        RingConfig c = r.config();
        ObjectNode o = json.createObjectNode();
        o.put("ringId", Integer.toUnsignedLong(c.ringId()));
        o.put("ranks", c.ranks());
        o.put("window", c.window());
        o.put("messagePayloadLength", c.messagePayloadLength());
        o.put("mtu", c.mtu());
        o.put("dtype", c.dtypeName());
        o.put("byteOrder", c.byteOrder() == ByteOrder.LITTLE_ENDIAN ? "little" : "big");
        o.put("packetsPerMessage", c.packetsPerMessage());
        o.put("aggregatorBytes", r.aggregatorBytes());
        o.put("state", r.state());
        if (r.newestMessage() == null) {
            o.putNull("newestMessage");
        } else {
            o.put("newestMessage", Integer.toUnsignedLong(r.newestMessage()));
        }
        o.put("messagesCompleted", r.messagesCompleted());
        o.put("aggregationsCompleted", r.aggregationsCompleted());
        ArrayNode conns = o.putArray("connections");
        for (ConnectionSpec s : r.connections()) {
            ObjectNode cn = conns.addObject();
            cn.put("rank", s.rank());
            cn.put("src", ConnectionSpec.ipString(s.srcIp()) + ":" + s.srcPort());
            cn.put("srcQpn", s.srcQpn());
            cn.put("dst", ConnectionSpec.ipString(s.dstIp()) + ":" + s.dstPort());
            cn.put("dstQpn", s.dstQpn());
        }
        return o;
    }

    private ObjectNode error(String message) {
        ObjectNode o = json.createObjectNode();
        o.put("error", message);
        return o;
    }

    private void respond(HttpExchange ex, int status, JsonNode body) throws IOException {
        try (ex) {
            if (body == null) {
                ex.sendResponseHeaders(status, -1);
                return;
            }
            byte[] bytes = json.writerWithDefaultPrettyPrinter().writeValueAsBytes(body);
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(status, bytes.length);
            ex.getResponseBody().write(bytes);
        }
    }

    /** A malformed request: HTTP 400 with this message. */
    private static final class BadRequest extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadRequest(String message) {
            super(message);
        }
    }
}
