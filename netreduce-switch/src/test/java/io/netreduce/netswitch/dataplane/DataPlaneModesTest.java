package io.netreduce.netswitch.dataplane;

import io.netreduce.netswitch.ControlClient;
import io.netreduce.netswitch.RingFixture;
import io.netreduce.netswitch.SwitchServer;
import io.netreduce.netswitch.UdpRingHosts;
import io.netreduce.netswitch.engine.RingConfig;
import io.netreduce.netswitch.engine.SwitchCounters.Counter;
import io.netreduce.wire.ina.InaHeader;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.nio.ByteOrder;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The data plane's receive and send variants (recvmmsg or GRO in, GSO runs or single
 * datagrams out) each carry a lossy ring to exact sums; {@link SwitchOverUdpTest} covers the
 * default mode in depth. The variants are chosen by system properties, read when a switch
 * starts, so each case sets them only around {@link SwitchServer#start}.
 */
@Timeout(120)
class DataPlaneModesTest {
    private static final int NET = (127 << 24) | (87 << 16);

    @ParameterizedTest(name = "gro={0} gso={1} seed={2}")
    @CsvSource({"false,false,301", "true,true,302", "true,false,303"})
    void everyIoVariantAggregatesExactly(boolean gro, boolean gso, long seed) throws Exception {
        String oldGro = System.getProperty(DataPlane.GRO_PROPERTY);
        String oldGso = System.getProperty(DataPlane.GSO_PROPERTY);
        SwitchServer server;
        try {
            System.setProperty(DataPlane.GRO_PROPERTY, Boolean.toString(gro));
            System.setProperty(DataPlane.GSO_PROPERTY, Boolean.toString(gso));
            server = SwitchServer.start(new InetSocketAddress(UdpRingHosts.inet(NET | 100), 0),
                    new InetSocketAddress("127.0.0.1", 0), 64L << 20);
        } finally {
            restore(DataPlane.GRO_PROPERTY, oldGro);
            restore(DataPlane.GSO_PROPERTY, oldGso);
        }
        try (server) {
            int p = 4;
            RingConfig c = new RingConfig(60, p, 4, 6000, 1024, InaHeader.DTYPE_FP32, ByteOrder.LITTLE_ENDIAN);
            RingFixture f = RingFixture.onHosts(c, NET | 10, seed);
            try (UdpRingHosts h = new UdpRingHosts(f, server.dataAddress(), seed, 0.03, 0.03, 0.03, 0.03, true,
                    Duration.ofMillis(20))) {
                HttpResponse<String> r = new ControlClient(server.controlAddress())
                        .request("POST", "/rings", ControlClient.ringJson(f));
                assertEquals(201, r.statusCode(), r.body());
                int messages = 40;
                assertTrue(h.run(messages, 6000, Duration.ofSeconds(60)), "ring did not finish, seed " + seed);
                for (int m = 0; m < messages; m++) {
                    byte[] expected = h.reference(m);
                    for (int k = 0; k < p; k++) {
                        assertArrayEquals(expected, h.result(k, m), "seed " + seed + " msg " + m + " rank " + k);
                    }
                }
                assertEquals(messages, server.engine().counters().get(Counter.MESSAGES_COMPLETED), "seed " + seed);
            }
        }
    }

    private static void restore(String key, String value) {
        if (value == null) {
            System.clearProperty(key);
        } else {
            System.setProperty(key, value);
        }
    }
}
