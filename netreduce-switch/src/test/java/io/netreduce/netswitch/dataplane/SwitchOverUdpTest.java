package io.netreduce.netswitch.dataplane;

import io.netreduce.netswitch.ControlClient;
import io.netreduce.netswitch.RingFixture;
import io.netreduce.netswitch.SwitchServer;
import io.netreduce.netswitch.UdpRingHosts;
import io.netreduce.netswitch.engine.DropReason;
import io.netreduce.netswitch.engine.RingConfig;
import io.netreduce.netswitch.engine.SwitchCounters.Counter;
import io.netreduce.wire.roce.Bth;
import io.netreduce.wire.ina.InaHeader;
import io.netreduce.wire.roce.Psn;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A running switch (real UDP data plane, real HTTP control plane) with a ring of hosts on
 * loopback addresses sending crafted RoCEv2 datagrams: the RC-free half of the end-to-end
 * story, and the fuzz target. It runs on the native data plane where its library loads
 * (it must under CI=true); {@link SwitchOverNettyUdpTest} runs every test again on the
 * Netty path.
 */
@Timeout(120)
class SwitchOverUdpTest {
    /** 127.88.0.0/16 keeps these hosts apart from other suites running on the machine. */
    private static final int NET = (127 << 24) | (88 << 16);
    private SwitchServer server;
    private ControlClient control;

    /** True to run on the native data plane (where it loads). */
    boolean nativeIo() {
        if ("true".equals(System.getenv("CI"))) {
            assertTrue(io.netreduce.wire.udp.NativeUdp.available(), io.netreduce.wire.udp.NativeUdp.describe());
        }
        return true;
    }

    @BeforeEach
    void start() throws Exception {
        server = SwitchServer.start(new InetSocketAddress(UdpRingHosts.inet(NET | 100), 0),
                new InetSocketAddress("127.0.0.1", 0), 64L << 20, nativeIo());
        control = new ControlClient(server.controlAddress());
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private UdpRingHosts hosts(RingConfig c, int firstHost, long seed, double loss, double dup, double reorder,
                               double returnLoss, boolean inPlace, Duration rto) throws Exception {
        RingFixture f = RingFixture.onHosts(c, NET | firstHost, seed);
        UdpRingHosts h = new UdpRingHosts(f, server.dataAddress(), seed, loss, dup, reorder, returnLoss, inPlace, rto);
        HttpResponse<String> r = control.request("POST", "/rings", ControlClient.ringJson(f));
        assertEquals(201, r.statusCode(), r.body());
        return h;
    }

    @ParameterizedTest(name = "P={0} seed={1}")
    @CsvSource({"2,101", "3,102", "5,103", "8,104"})
    void ringSumsExactlyUnderLossDuplicationReorderingAndInPlaceReuse(int p, long seed) throws Exception {
        RingConfig c = new RingConfig(40 + p, p, 2, 3000, 1024, InaHeader.DTYPE_FP32, ByteOrder.LITTLE_ENDIAN);
        try (UdpRingHosts h = hosts(c, 10, seed, 0.05, 0.05, 0.05, 0.05, true, Duration.ofMillis(20))) {
            int messages = 24;
            assertTrue(h.run(messages, 3000, Duration.ofSeconds(60)), "ring did not finish, seed " + seed);
            for (int m = 0; m < messages; m++) {
                byte[] expected = h.reference(m);
                for (int r = 0; r < p; r++) {
                    assertArrayEquals(expected, h.result(r, m), "seed " + seed + " msg " + m + " rank " + r);
                }
            }
            var counters = server.engine().counters();
            assertTrue(counters.get(Counter.DUPLICATES) + counters.get(Counter.RETRANSMITTED_RESULTS) > 0,
                    "faults must have exercised the idempotence rules, seed " + seed);
        }
    }

    @Test
    void controlPlaneCreatesListsDeletesAndRefusesBadRequests() throws Exception {
        String ring = "{\"ringId\":5,\"ranks\":4,\"window\":2,\"messagePayloadLength\":4096,\"mtu\":1024}";
        HttpResponse<String> created = control.request("POST", "/rings", ring);
        assertEquals(201, created.statusCode(), created.body());
        assertTrue(created.body().contains("\"state\" : \"registering\""), created.body());
        HttpResponse<String> dup = control.request("POST", "/rings", ring);
        assertEquals(409, dup.statusCode());
        assertTrue(dup.body().contains("already exists"), dup.body());

        String conn = "{\"rank\":0,\"src\":\"127.88.1.1\",\"srcQpn\":17,\"dst\":\"127.88.1.2:4791\",\"dstQpn\":18}";
        HttpResponse<String> reg = control.request("POST", "/rings/5/connections", conn);
        assertEquals(201, reg.statusCode(), reg.body());
        assertTrue(reg.body().contains("127.88.1.2:4791"), reg.body());
        assertEquals(409, control.request("POST", "/rings/5/connections", conn).statusCode());

        assertBad(400, "POST", "/rings", "{\"ringId\":6,\"ranks\":1,\"window\":2,\"messagePayloadLength\":64}", "ranks");
        assertBad(400, "POST", "/rings", "{\"ringId\":6,\"ranks\":2,\"window\":2,\"messagePayloadLength\":64,\"mtu\":1000}", "MTU");
        assertBad(400, "POST", "/rings", "{\"ringId\":6,\"ranks\":2,\"window\":2,\"messagePayloadLength\":6}", "multiple of 4");
        assertBad(400, "POST", "/rings", "{\"ringId\":6,\"ranks\":2,\"window\":2,\"messagePayloadLength\":64,\"dtype\":\"fp16\"}", "dtype");
        assertBad(400, "POST", "/rings", "{\"ringId\":6,\"ranks\":2,\"window\":2,\"messagePayloadLength\":64,\"colour\":1}", "unknown field");
        assertBad(400, "POST", "/rings", "{\"ringId\":6,\"ranks\":2", "malformed JSON");
        assertBad(400, "POST", "/rings", "{\"ringId\":6,\"ranks\":\"two\",\"window\":2,\"messagePayloadLength\":64}", "integer");
        assertBad(400, "POST", "/rings/5/connections", "{\"rank\":1,\"src\":\"host.example\",\"srcQpn\":1,\"dst\":\"127.0.0.1\",\"dstQpn\":2}", "IPv4");
        assertBad(400, "POST", "/rings/5/connections", "{\"rank\":9,\"src\":\"127.88.1.3\",\"srcQpn\":1,\"dst\":\"127.88.1.4\",\"dstQpn\":2}", "out of range");
        assertBad(400, "POST", "/rings/5/connections", "{\"rank\":1,\"src\":\"127.88.1.3\",\"srcQpn\":16777216,\"dst\":\"127.88.1.4\",\"dstQpn\":2}", "24 bits");
        assertBad(404, "POST", "/rings/77/connections", conn, "no ring 77");
        assertBad(400, "GET", "/rings/abc", null, "unsigned");
        assertBad(405, "PUT", "/rings", "{}", "GET or POST");
        // Does not fit the 64 MiB budget: refused, the hosts fall back to ring all-reduce.
        assertBad(409, "POST", "/rings", "{\"ringId\":8,\"ranks\":8,\"window\":16,\"messagePayloadLength\":1048576,\"mtu\":4096}",
                "aggregator memory");

        HttpResponse<String> list = control.request("GET", "/rings", null);
        assertEquals(200, list.statusCode());
        assertTrue(list.body().contains("\"ringId\" : 5"), list.body());
        String metrics = control.request("GET", "/metrics", null).body();
        long used = ControlClient.metric(metrics, "netreduce_switch_aggregator_memory_used_bytes");
        assertTrue(used > 0);
        assertEquals(64L << 20, used + ControlClient.metric(metrics, "netreduce_switch_aggregator_memory_free_bytes"));
        assertEquals(204, control.request("DELETE", "/rings/5", null).statusCode());
        assertEquals(404, control.request("GET", "/rings/5", null).statusCode());
        metrics = control.request("GET", "/metrics", null).body();
        assertEquals(0, ControlClient.metric(metrics, "netreduce_switch_aggregator_memory_used_bytes"));
        assertEquals(0, ControlClient.metric(metrics, "netreduce_switch_rings"));
    }

    private void assertBad(int status, String method, String path, String body, String says) throws Exception {
        HttpResponse<String> r = control.request(method, path, body);
        assertEquals(status, r.statusCode(), method + " " + path + " " + body + " -> " + r.body());
        assertTrue(r.body().contains("\"error\"") && r.body().contains(says),
                "error should mention '" + says + "': " + r.body());
    }

    /**
     * While a ring aggregates, a fuzzer sends mutated copies of its packets and random
     * datagrams, from the ring's own host addresses and from a stranger: the results stay
     * exact, the switch stays up, and every garbage datagram shows up as a drop.
     */
    @Test
    void fuzzedTrafficIsDroppedAndAccountedWhileTheRingStaysExact() throws Exception {
        long seed = 2024;
        Random rnd = new Random(seed);
        RingConfig c = new RingConfig(60, 4, 2, 2000, 512, InaHeader.DTYPE_FP32, ByteOrder.LITTLE_ENDIAN);
        try (UdpRingHosts h = hosts(c, 30, seed, 0, 0, 0, 0, false, Duration.ofSeconds(30));
             UdpRingHosts stranger = new UdpRingHosts(RingFixture.onHosts(c, NET | 200, seed + 1),
                     server.dataAddress(), seed, 0, 0, 0, 0, false, Duration.ofSeconds(30))) {
            RingFixture f = h.ring;
            List<ByteBuffer> templates = f.message(1, 5, f.randomPayload(rnd, 2000), Psn.add(f.firstPsn[1], 40), false);
            int garbage = 0;
            java.util.concurrent.atomic.AtomicReference<Throwable> ringFailure = new java.util.concurrent.atomic.AtomicReference<>();
            java.util.concurrent.atomic.AtomicBoolean finished = new java.util.concurrent.atomic.AtomicBoolean();
            Thread ringThread = new Thread(() -> {
                try {
                    finished.set(h.run(40, 2000, Duration.ofSeconds(60)));
                } catch (Throwable e) {
                    ringFailure.set(e);
                }
            });
            ringThread.start();
            for (int i = 0; i < 3000; i++) {
                ByteBuffer d;
                int kind = rnd.nextInt(5);
                if (kind == 0) {
                    byte[] b = new byte[rnd.nextInt(200)];
                    rnd.nextBytes(b);
                    d = ByteBuffer.wrap(b);
                } else {
                    d = ByteBuffer.wrap(templates.get(rnd.nextInt(templates.size())).array().clone());
                    if (kind == 1) {
                        // bit flips without a new ICRC, outside the BTH byte the ICRC masks (a flip
                        // there leaves a valid packet, which is no garbage)
                        for (int k = 0; k < 1 + rnd.nextInt(3); k++) {
                            int at = rnd.nextInt(d.capacity());
                            at = at == Bth.ECN_OFFSET ? at + 1 : at;
                            d.put(at, (byte) (d.get(at) ^ (1 + rnd.nextInt(255))));
                        }
                    } else if (kind == 2) {
                        d = ByteBuffer.wrap(java.util.Arrays.copyOf(d.array(), rnd.nextInt(d.capacity())));
                    } else if (kind == 3) {
                        // well-signed but impossible: a far PSN or a lying INA header
                        ByteBuffer first = ByteBuffer.wrap(templates.get(0).array().clone());
                        int field = rnd.nextInt(3);
                        if (field == 0) {
                            first.putShort(Bth.LENGTH + InaHeader.RANK_OFFSET, (short) 3);
                        } else if (field == 1) {
                            first.putInt(Bth.LENGTH + InaHeader.RING_ID_OFFSET, 61);
                        } else {
                            first.putInt(Bth.LENGTH + InaHeader.PAYLOAD_LENGTH_OFFSET, 4000);
                        }
                        d = first;
                        f.sign(1, d);
                    } else {
                        ByteBuffer mid = ByteBuffer.wrap(templates.get(1).array().clone());
                        new Bth().wrap(mid, 0).psn(Psn.add(f.firstPsn[1], 3_000_000 + rnd.nextInt(1000)), false);
                        f.sign(1, mid);
                        d = mid;
                    }
                }
                if (rnd.nextInt(3) == 0) {
                    stranger.transmit(rnd.nextInt(4), d);
                } else {
                    h.transmit(1, d);
                }
                garbage++;
                if (i % 100 == 0) {
                    Thread.sleep(2);
                }
            }
            ringThread.join(90_000);
            if (ringFailure.get() != null) {
                throw new AssertionError("ring hosts failed, seed " + seed, ringFailure.get());
            }
            assertTrue(finished.get(), "ring did not finish in time, seed " + seed);
            for (int m = 0; m < 40; m++) {
                for (int r = 0; r < 4; r++) {
                    assertArrayEquals(h.reference(m), h.result(r, m), "seed " + seed + " msg " + m + " rank " + r);
                }
            }
            // Every datagram the hosts sent was seen; every garbage one was dropped.
            long sent = h.datagramsSent.get() + stranger.datagramsSent.get();
            long deadline = System.nanoTime() + 10_000_000_000L;
            var counters = server.engine().counters();
            while (counters.get(Counter.PACKETS_IN) < sent && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(sent, counters.get(Counter.PACKETS_IN), "kernel dropped datagrams? seed " + seed);
            String metrics = control.request("GET", "/metrics", null).body();
            long drops = 0;
            for (DropReason r : DropReason.values()) {
                drops += ControlClient.metric(metrics, "netreduce_switch_drops_total{reason=\"" + r.label() + "\"}");
            }
            assertEquals(garbage, drops, "seed " + seed + "\n" + metrics);
            assertTrue(counters.drops(DropReason.BAD_ICRC) > 0 && counters.drops(DropReason.UNKNOWN_CONNECTION) > 0
                    && counters.drops(DropReason.PSN_OUT_OF_WINDOW) > 0 && counters.drops(DropReason.TRUNCATED) > 0,
                    metrics);
        }
    }
}
