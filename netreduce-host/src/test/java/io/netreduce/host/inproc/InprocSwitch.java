package io.netreduce.host.inproc;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.netreduce.host.MessagePlan;
import io.netreduce.verbs.ScatterGatherList;
import io.netreduce.verbs.roce.InaHeader;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A message-level stand-in for the NetReduce switch, for host-layer unit tests: it holds
 * each rank's message, sums the fp32 payloads in rank order when all P have arrived, and
 * delivers to every sender's peer that sender's own INA header followed by the sum. Rings
 * are created through the same HTTP/JSON requests as the real switch's control plane
 * ({@code POST /rings} with the client's ringId, {@code POST /rings/{id}/connections},
 * {@code DELETE /rings/{id}}); a ring that needs more than the memory budget (2N messages ×
 * P ranks × payload) is refused with 409. Unlike the real switch it routes by the sender's
 * connected peer, not by the registered connections (it only counts them).
 */
public final class InprocSwitch implements AutoCloseable {
    private static final Map<InetSocketAddress, InprocSwitch> SWITCHES = new ConcurrentHashMap<>();
    private static final String ORDER = MessagePlan.PAYLOAD_ORDER == java.nio.ByteOrder.LITTLE_ENDIAN ? "little"
            : "big";
    private static final Pattern NUMBER = Pattern.compile("\"(\\w+)\"\\s*:\\s*(-?\\d+)");

    private final InetSocketAddress datapath;
    private final long memoryBudget;
    private final HttpServer http;
    private final AtomicInteger nextRing = new AtomicInteger(1);
    private final Map<Integer, Integer> ringRanks = new ConcurrentHashMap<>();
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
        String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        Map<String, Long> fields = new HashMap<>();
        Matcher m = NUMBER.matcher(body);
        while (m.find()) {
            fields.put(m.group(1), Long.parseLong(m.group(2)));
        }
        String[] path = ex.getRequestURI().getPath().split("/");
        int status;
        String reply;
        if ("POST".equals(ex.getRequestMethod()) && path.length == 2) {
            long ranks = fields.getOrDefault("ranks", 0L);
            long need = 2 * fields.getOrDefault("window", 0L) * ranks
                    * fields.getOrDefault("messagePayloadLength", 0L);
            if (ranks < 1 || need > memoryBudget || !body.contains("\"byteOrder\":\"" + ORDER + "\"")) {
                status = ranks < 1 ? 400 : 409;
                reply = "{\"error\":\"ring needs " + need + " bytes of aggregator memory, budget is "
                        + memoryBudget + " (or byteOrder is not " + ORDER + ")\"}";
            } else {
                int id = fields.getOrDefault("ringId", (long) nextRing.getAndIncrement()).intValue();
                ringRanks.put(id, (int) ranks);
                registeredConnections.put(id, new AtomicInteger());
                status = 201;
                reply = "{\"ringId\":" + id + "}";
            }
        } else if ("POST".equals(ex.getRequestMethod()) && path.length == 4 && "connections".equals(path[3])) {
            AtomicInteger c = registeredConnections.get(Integer.parseInt(path[2]));
            status = c == null ? 404 : 201;
            reply = c == null ? "{\"error\":\"no such ring\"}" : "{}";
            if (c != null) {
                c.addAndGet(body.split("\"srcQpn\"", -1).length - 1);
            }
        } else if ("DELETE".equals(ex.getRequestMethod()) && path.length == 3) {
            ringRanks.remove(Integer.parseInt(path[2]));
            status = 200;
            reply = "{}";
        } else {
            status = 404;
            reply = "{\"error\":\"unknown request\"}";
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
        Integer ranks = ringRanks.get(h.ringId());
        if (ranks == null || h.rank() >= ranks) {
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
        emit(done);
    }

    private static void emit(Aggregation a) {
        int payload = Integer.MAX_VALUE;
        for (ByteBuffer m : a.messages) {
            payload = Math.min(payload, m.limit() - InaHeader.LENGTH);
        }
        ByteBuffer sum = ByteBuffer.allocate(payload).order(MessagePlan.PAYLOAD_ORDER);
        ByteBuffer[] lanes = new ByteBuffer[a.messages.length];
        for (int r = 0; r < lanes.length; r++) {
            lanes[r] = a.messages[r].duplicate().order(MessagePlan.PAYLOAD_ORDER);
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
