package io.netreduce.wire.control;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netreduce.wire.ina.InaHeader;
import io.netreduce.wire.roce.RoceAddressing;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The control plane's JSON, both directions, written once for the switch, its clients and
 * the test stand-ins. Decoding is strict, because a typo in a ring request must not
 * silently become a default: unknown fields, wrong types and malformed addresses are refused
 * with a {@link BadRequest} that names the field.
 *
 * <pre>
 * ring        {"ringId":7,"ranks":4,"window":2,"messagePayloadLength":65536,"mtu":1024,
 *              "dtype":"fp32","byteOrder":"little","connections":[connection...]}
 * connection  {"rank":0,"src":"127.0.0.2:4791","srcQpn":17,"dst":"127.0.0.3","dstQpn":18}
 *              (a port left out is 4791)
 * status      ring fields + "packetsPerMessage","aggregatorBytes","state","newestMessage",
 *              "messagesCompleted","aggregationsCompleted"
 * list        {"rings":[status...],"memoryBudget":n,"memoryUsed":n}
 * error       {"error":"what was wrong"}
 * </pre>
 */
public final class ControlJson {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> RING_FIELDS = Set.of("ringId", "ranks", "window", "messagePayloadLength",
            "mtu", "dtype", "byteOrder", "connections");
    private static final Set<String> CONNECTION_FIELDS = Set.of("rank", "src", "srcQpn", "dst", "dstQpn");
    private static final int DEFAULT_MTU = 1024;

    private ControlJson() {
    }

    /** A request or reply the codec cannot accept; the message says which field and why. */
    public static final class BadRequest extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        public BadRequest(String message) {
            super(message);
        }
    }

    /** A ring to create, with the connections to register at once (possibly none). */
    public record CreateRing(RingSpec spec, List<ConnectionEntry> connections) {
        public CreateRing {
            connections = List.copyOf(connections);
        }
    }

    // ------------------------------------------------------------------ encoding

    public static String createRing(RingSpec spec, List<ConnectionEntry> connections) {
        ObjectNode o = spec(spec);
        if (!connections.isEmpty()) {
            o.set("connections", connectionArray(connections));
        }
        return write(o);
    }

    public static String connections(List<ConnectionEntry> connections) {
        return write(connectionArray(connections));
    }

    public static String status(RingStatus s) {
        return pretty(statusNode(s));
    }

    public static String list(RingList l) {
        ObjectNode o = JSON.createObjectNode();
        ArrayNode rings = o.putArray("rings");
        for (RingStatus s : l.rings()) {
            rings.add(statusNode(s));
        }
        o.put("memoryBudget", l.memoryBudget());
        o.put("memoryUsed", l.memoryUsed());
        return pretty(o);
    }

    public static String error(String message) {
        ObjectNode o = JSON.createObjectNode();
        o.put("error", message);
        return pretty(o);
    }

    private static ObjectNode spec(RingSpec s) {
        ObjectNode o = JSON.createObjectNode();
        o.put("ringId", Integer.toUnsignedLong(s.ringId()));
        o.put("ranks", s.ranks());
        o.put("window", s.window());
        o.put("messagePayloadLength", s.messagePayloadLength());
        o.put("mtu", s.mtu());
        o.put("dtype", InaHeader.dtypeName(s.dtype()));
        o.put("byteOrder", s.byteOrder() == ByteOrder.LITTLE_ENDIAN ? "little" : "big");
        return o;
    }

    private static ObjectNode statusNode(RingStatus s) {
        ObjectNode o = spec(s.spec());
        o.put("packetsPerMessage", s.packetsPerMessage());
        o.put("aggregatorBytes", s.aggregatorBytes());
        o.put("state", s.state());
        if (s.newestMessage() == null) {
            o.putNull("newestMessage");
        } else {
            o.put("newestMessage", s.newestMessage());
        }
        o.put("messagesCompleted", s.messagesCompleted());
        o.put("aggregationsCompleted", s.aggregationsCompleted());
        o.set("connections", connectionArray(s.connections()));
        return o;
    }

    private static ArrayNode connectionArray(List<ConnectionEntry> connections) {
        ArrayNode a = JSON.createArrayNode();
        for (ConnectionEntry c : connections) {
            ObjectNode n = a.addObject();
            n.put("rank", c.rank());
            n.put("src", ConnectionEntry.text(c.src()));
            n.put("srcQpn", c.srcQpn());
            n.put("dst", ConnectionEntry.text(c.dst()));
            n.put("dstQpn", c.dstQpn());
        }
        return a;
    }

    private static String write(JsonNode n) {
        try {
            return JSON.writeValueAsString(n);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode " + n, e);
        }
    }

    private static String pretty(JsonNode n) {
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(n);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode " + n, e);
        }
    }

    // ------------------------------------------------------------------ decoding

    public static CreateRing parseCreateRing(byte[] body) {
        JsonNode o = read(body);
        requireObject(o, "ring");
        checkFields(o, RING_FIELDS, "ring");
        JsonNode conns = o.get("connections");
        return new CreateRing(parseSpec(o), conns == null ? List.of() : parseConnections(conns));
    }

    /** One connection object or an array of them ({@code POST /rings/{id}/connections}). */
    public static List<ConnectionEntry> parseConnections(byte[] body) {
        return parseConnections(read(body));
    }

    public static RingStatus parseStatus(String body) {
        return parseStatus(read(body.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }

    public static RingList parseList(String body) {
        JsonNode o = read(body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        requireObject(o, "ring list");
        List<RingStatus> rings = new ArrayList<>();
        for (JsonNode r : o.path("rings")) {
            rings.add(parseStatus(r));
        }
        return new RingList(rings, o.path("memoryBudget").asLong(), o.path("memoryUsed").asLong());
    }

    /** The {@code error} text of an error reply, or the body itself if it is not one. */
    public static String errorText(String body) {
        try {
            JsonNode n = JSON.readTree(body);
            return n != null && n.hasNonNull("error") ? n.get("error").asText() : body;
        } catch (JsonProcessingException e) {
            return body;
        }
    }

    private static RingStatus parseStatus(JsonNode o) {
        requireObject(o, "ring status");
        JsonNode newest = o.get("newestMessage");
        return new RingStatus(parseSpec(o), parseConnections(o.path("connections")), o.path("packetsPerMessage").asInt(),
                o.path("aggregatorBytes").asLong(), o.path("state").asText(),
                newest == null || newest.isNull() ? null : newest.asLong(), o.path("messagesCompleted").asLong(),
                o.path("aggregationsCompleted").asLong());
    }

    private static RingSpec parseSpec(JsonNode o) {
        try {
            return new RingSpec(intField(o, "ringId", null), intField(o, "ranks", null), intField(o, "window", null),
                    intField(o, "messagePayloadLength", null), intField(o, "mtu", DEFAULT_MTU),
                    dtype(o.path("dtype")), byteOrder(o.path("byteOrder")));
        } catch (BadRequest e) {
            throw e;
        } catch (IllegalArgumentException e) {
            throw new BadRequest(e.getMessage());
        }
    }

    private static List<ConnectionEntry> parseConnections(JsonNode node) {
        if (node.isMissingNode()) {
            return List.of();
        }
        if (node.isObject()) {
            return List.of(parseConnection(node, -1));
        }
        if (!node.isArray()) {
            throw new BadRequest("connections must be an object or an array of objects");
        }
        List<ConnectionEntry> out = new ArrayList<>();
        for (int i = 0; i < node.size(); i++) {
            out.add(parseConnection(node.get(i), i));
        }
        return out;
    }

    private static ConnectionEntry parseConnection(JsonNode c, int index) {
        String where = index < 0 ? "connection" : "connections[" + index + "]";
        requireObject(c, where);
        checkFields(c, CONNECTION_FIELDS, where);
        int rank = intField(c, "rank", index < 0 ? null : index);
        InetSocketAddress src = address(c, "src", where);
        InetSocketAddress dst = address(c, "dst", where);
        try {
            return new ConnectionEntry(rank, src, intField(c, "srcQpn", null), dst, intField(c, "dstQpn", null));
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
        int port = RoceAddressing.UDP_PORT;
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
        if (port <= 0 || port > 0xFFFF) {
            throw new BadRequest(where + "." + field + ": port out of range in '" + text + "'");
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port);
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
        int d = InaHeader.dtypeOf(n.asText().toLowerCase(Locale.ROOT));
        if (d < 0) {
            throw new BadRequest("dtype must be \"fp32\" or \"int32\", not " + n);
        }
        return d;
    }

    private static ByteOrder byteOrder(JsonNode n) {
        if (n.isMissingNode() || n.isNull()) {
            return ByteOrder.LITTLE_ENDIAN;
        }
        switch (n.asText().toLowerCase(Locale.ROOT)) {
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
        if (field.equals("ringId") && n.isIntegralNumber() && n.canConvertToLong()
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

    private static JsonNode read(byte[] body) {
        if (body.length == 0) {
            throw new BadRequest("empty request body; expected JSON");
        }
        try {
            return JSON.readTree(body);
        } catch (JsonProcessingException e) {
            throw new BadRequest("malformed JSON: " + e.getOriginalMessage());
        } catch (java.io.IOException e) {
            throw new BadRequest("unreadable JSON: " + e.getMessage());
        }
    }
}
