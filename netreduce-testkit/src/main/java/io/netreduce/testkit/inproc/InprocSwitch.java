package io.netreduce.testkit.inproc;



import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.netreduce.verbs.ScatterGatherList;
import io.netreduce.wire.control.ConnectionEntry;
import io.netreduce.wire.control.ControlJson;
import io.netreduce.wire.control.ControlPaths;
import io.netreduce.wire.control.RingSpec;
import io.netreduce.wire.control.RingStatus;
import io.netreduce.wire.ina.InaHeader;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A message-level stand-in for the NetReduce switch, for host-layer unit tests: it holds
 * each rank's message, sums the fp32 payloads in rank order when all P have arrived, and
 * delivers to every sender's peer that sender's own INA header, marked as a result of P
 * contributions as the real switch marks it, followed by the sum. Rings
 * are created through the same HTTP/JSON requests as the real switch's control plane
 * ({@code POST /rings} with the client's ringId, {@code POST /rings/{id}/connections},
 * {@code DELETE /rings/{id}}); a ring that needs more than the memory budget (2N messages ×
 * P ranks × payload) is refused with 409. Unlike the real switch it routes by the sender's
 * connected peer, not by the registered connections (it only counts them).
 */
public final class InprocSwitch implements AutoCloseable {
    private static final Map<InetSocketAddress, InprocSwitch> SWITCHES = new ConcurrentHashMap<>();

    private final InetSocketAddress datapath;
    private final long memoryBudget;
    private final HttpServer http;
    private final AtomicInteger nextRing = new AtomicInteger(1);
    private final Map<Integer, RingSpec> rings = new ConcurrentHashMap<>();
    private final Map<Long, Aggregation> slots = new HashMap<>();
    /** Connections registered per ring, so tests can check what the collectives layer told us. */
    public final Map<Integer, AtomicInteger> registeredConnections = new ConcurrentHashMap<>();

    private static final class Aggregation {
        final ByteBuffer[] messages;
        final InprocQueuePair[] senders;
        final long[] wrIds;
        int count;

        Aggregation(int ranks) {
            messages = new ByteBuffer[ranks];
            senders = new InprocQueuePair[ranks];
            wrIds = new long[ranks];
        }
    }

    private InprocSwitch(InetSocketAddress datapath, long memoryBudget) throws IOException {
        this.datapath = datapath;
        this.memoryBudget = memoryBudget;
        this.http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        http.createContext("/rings", this::handle);
        http.start();
    }

    public static InprocSwitch start(InetSocketAddress datapath, long memoryBudget) throws IOException {
        InprocSwitch sw = new InprocSwitch(datapath, memoryBudget);
        if (SWITCHES.putIfAbsent(datapath, sw) != null) {
            sw.http.stop(0);
            throw new IllegalStateException("an inproc switch already serves " + datapath);
        }
        return sw;
    }

    static InprocSwitch at(InetSocketAddress gateway) {
        return SWITCHES.get(gateway);
    }

    public InetSocketAddress datapath() {
        return datapath;
    }

    public URI controlUri() {
        return URI.create("http://127.0.0.1:" + http.getAddress().getPort());
    }

    private void handle(HttpExchange ex) throws IOException {
        byte[] body = ex.getRequestBody().readAllBytes();
        String[] path = ex.getRequestURI().getPath().split("/");
        int status;
        String reply;
        try {
            if ("POST".equals(ex.getRequestMethod()) && path.length == 2) {
                RingSpec spec = ControlJson.parseCreateRing(body).spec();
                long need = 2L * spec.window() * spec.ranks() * spec.messagePayloadLength();
                if (spec.ranks() < 1) {
                    status = 400;
                    reply = ControlJson.error("a ring needs at least one rank");
                } else if (need > memoryBudget || spec.byteOrder() != InaHeader.PAYLOAD_ORDER) {
                    status = 409;
                    reply = ControlJson.error("ring needs " + need + " bytes of aggregator memory, budget is "
                            + memoryBudget + " (or byteOrder is not " + InaHeader.PAYLOAD_ORDER + ")");
                } else {
                    rings.put(spec.ringId(), spec);
                    registeredConnections.put(spec.ringId(), new AtomicInteger());
                    status = 201;
                    reply = ControlJson.status(new RingStatus(spec, List.of(), 0, need, "registering", null, 0, 0));
                }
            } else if ("POST".equals(ex.getRequestMethod()) && path.length == 4
                    && ControlPaths.CONNECTIONS.equals(path[3])) {
                int ringId = Integer.parseUnsignedInt(path[2]);
                AtomicInteger c = registeredConnections.get(ringId);
                status = c == null ? 404 : 201;
                if (c == null) {
                    reply = ControlJson.error("no ring " + path[2]);
                } else {
                    List<ConnectionEntry> added = ControlJson.parseConnections(body);
                    c.addAndGet(added.size());
                    reply = ControlJson.status(new RingStatus(
                            rings.get(ringId), added, 0, 0, "ready", null, 0, 0));
                }
            } else if ("DELETE".equals(ex.getRequestMethod()) && path.length == 3) {
                rings.remove(Integer.parseUnsignedInt(path[2]));
                status = 204;
                reply = null;
            } else {
                status = 404;
                reply = ControlJson.error("unknown request");
            }
        } catch (IllegalArgumentException e) {
            status = 400;
            reply = ControlJson.error(e.getMessage());
        }
        if (reply == null) {
            ex.sendResponseHeaders(status, -1);
            ex.close();
            return;
        }
        byte[] bytes = reply.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length);
        ex.getResponseBody().write(bytes);
        ex.close();
    }

    /** One message from {@code sender}: store a copy; when the slot is full, emit the sum. */
    void accept(InprocQueuePair sender, long wrId, ScatterGatherList gather) {
        int length = (int) gather.totalLength();
        ByteBuffer message = ByteBuffer.allocate(length);
        for (int i = 0; i < gather.count(); i++) {
            message.put(message.position(), ((InprocMemoryRegion) gather.region(i)).view(), gather.offset(i),
                    gather.length(i));
            message.position(message.position() + gather.length(i));
        }
        message.flip();
        InaHeader h = new InaHeader().wrap(message, 0);
        RingSpec ring = rings.get(h.ringId());
        int ranks = ring == null ? 0 : ring.ranks();
        if (ring == null || h.rank() >= ranks) {
            sender.fail(wrId, "inproc switch: unknown ring " + h.ringId() + " or rank " + h.rank());
            return;
        }
        Aggregation done;
        synchronized (slots) {
            long key = ((long) h.ringId() << 32) | (h.msgId() & 0xFFFFFFFFL);
            Aggregation a = slots.computeIfAbsent(key, k -> new Aggregation(ranks));
            if (a.messages[h.rank()] == null) {
                a.count++;
            }
            a.messages[h.rank()] = message;
            a.senders[h.rank()] = sender;
            a.wrIds[h.rank()] = wrId;
            if (a.count < ranks) {
                return;
            }
            slots.remove(key);
            done = a;
        }
        if (!sameCall(done)) {
            mismatch(done);
            return;
        }
        emit(done);
    }

    /** True if every rank's message carries the same call digest, as the real switch requires. */
    private static boolean sameCall(Aggregation a) {
        int call = new InaHeader().wrap(a.messages[0], 0).call();
        for (ByteBuffer m : a.messages) {
            if (new InaHeader().wrap(m, 0).call() != call) {
                return false;
            }
        }
        return true;
    }

    /** As the real switch: never summed; each rank's own message goes on marked as a call-mismatch notice. */
    private static void mismatch(Aggregation a) {
        for (int r = 0; r < a.messages.length; r++) {
            ByteBuffer out = ByteBuffer.allocate(a.messages[r].limit());
            out.put(0, a.messages[r], 0, out.capacity());
            InaHeader.markCallMismatch(out, 0);
            a.senders[r].peer().arrive(new InprocQueuePair.Incoming(a.senders[r], a.wrIds[r], null, out));
        }
    }

    private static void emit(Aggregation a) {
        int payload = Integer.MAX_VALUE;
        for (ByteBuffer m : a.messages) {
            payload = Math.min(payload, m.limit() - InaHeader.LENGTH);
        }
        ByteBuffer sum = ByteBuffer.allocate(payload).order(InaHeader.PAYLOAD_ORDER);
        ByteBuffer[] lanes = new ByteBuffer[a.messages.length];
        for (int r = 0; r < lanes.length; r++) {
            lanes[r] = a.messages[r].duplicate().order(InaHeader.PAYLOAD_ORDER);
        }
        for (int e = 0; e < payload; e += 4) {
            float acc = lanes[0].getFloat(InaHeader.LENGTH + e);
            for (int r = 1; r < lanes.length; r++) {
                acc += lanes[r].getFloat(InaHeader.LENGTH + e);
            }
            sum.putFloat(e, acc);
        }
        for (int r = 0; r < a.messages.length; r++) {
            ByteBuffer out = ByteBuffer.allocate(InaHeader.LENGTH + payload);
            out.put(0, a.messages[r], 0, InaHeader.LENGTH).put(InaHeader.LENGTH, sum, 0, payload);
            InaHeader.markResult(out, 0, a.messages.length);
            InprocQueuePair peer = a.senders[r].peer();
            peer.arrive(new InprocQueuePair.Incoming(a.senders[r], a.wrIds[r], null, out));
        }
    }

    @Override
    public void close() {
        SWITCHES.remove(datapath, this);
        http.stop(0);
    }
}
