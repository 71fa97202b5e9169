package io.netreduce.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.verbs.Counter;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.FaultPlan;
import io.netreduce.wire.udp.NativeUdp;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Bit-exact bulk transfers through real UDP sockets on loopback, clean and under seeded
 * loss, duplication, reordering and corruption. Loss cases move 16 MiB each; run with
 * {@code -Dnetreduce.stress=true} for 64 MiB each.
 */
class SoftTransferTest {
    private static final boolean STRESS = Boolean.getBoolean("netreduce.stress");
    private static final long MIB = 1 << 20;
    /**
     * Generous: the CI box has two cores shared with other jobs, and a scheduling stall
     * longer than the ACK timeout costs a (harmless but counted) go-back-N retry.
     */
    private static final Duration ACK_TIMEOUT = Duration.ofMillis(500);
    private SoftPair pair;

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    private static DeviceOptions.Builder host(String address) {
        // Every payload gathered in place (the default leaves payloads below 2 KiB to a copy), so
        // that these transfers at MTU 1024 check the gathered packets bit for bit.
        DeviceOptions.Builder b = DeviceOptions.builder().localAddress(address).property("soft.gatherMinBytes", "1");
        for (String k : new String[] {"soft.gso", "soft.gro"}) {
            if (System.getProperty(k) != null) {
                b.property(k, System.getProperty(k));
            }
        }
        return b;
    }

    private Transfer run(String a, String b, FaultPlan egressA, FaultPlan egressB, int mtu, int initialPsn,
                         long bytes, long seed) throws InterruptedException {
        pair = new SoftPair(host(a).egressFaults(egressA), host(b).egressFaults(egressB),
                q -> q.mtu(mtu).ackTimeout(ACK_TIMEOUT).initialPsn(initialPsn));
        Transfer t = new Transfer(pair, seed, 3 * mtu + 100);
        t.run(bytes, Duration.ofSeconds(120));
        return t;
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void sixtyFourMebibytesCleanAtDefaultMtu() throws InterruptedException {
        long seed = 11;
        Transfer t = run("127.0.31.1", "127.0.31.2", FaultPlan.NONE, FaultPlan.NONE, 1024, -1, 64 * MIB, seed);
        assertTrue(t.bytes >= 64 * MIB, "seed " + seed);
        assertEquals(0, pair.a.qp.counters().get(Counter.RETRANSMITTED_PACKETS), "no loss, no retransmission");
        assertEquals(0, pair.b.qp.counters().totalDrops(), "receiver drops: " + pair.b.qp.counters());
        assertGathered(true);
    }

    /**
     * With native I/O, packets whose payload lies in one registered region leave with no copy
     * in user space (the socket gathers the payload; the receiver's ICRC checks and bit-exact
     * data prove it arrived whole); where a fault plan changes or moves packets, or with Netty's
     * I/O, every packet is copied.
     */
    private void assertGathered(boolean mayGather) {
        boolean nativeIo = NativeUdp.available() && !"false".equals(System.getProperty("soft.nativeIo"));
        long gathered = pair.a.qp.counters().get(Counter.PAYLOADS_GATHERED);
        if (mayGather && nativeIo) {
            assertTrue(gathered > pair.a.qp.counters().get(Counter.PACKETS_SENT) / 2,
                    "gathered " + gathered + " of " + pair.a.qp.counters());
        } else {
            assertEquals(0, gathered, pair.a.qp.counters().toString());
        }
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void onePercentLossBothDirections() throws InterruptedException {
        long seed = 12;
        run("127.0.31.3", "127.0.31.4", FaultPlan.loss(seed, 0.01), FaultPlan.loss(seed + 1, 0.01), 1024, -1,
                (STRESS ? 64 : 16) * MIB, seed);
        assertTrue(pair.a.qp.counters().get(Counter.RETRANSMITTED_PACKETS) > 0, "seed " + seed);
        assertGathered(true);
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void fivePercentLossWithDuplicationReorderingAndCorruption() throws InterruptedException {
        long seed = 13;
        FaultPlan ab = new FaultPlan(seed, 0.05, 0.02, 0.02, 0.01);
        FaultPlan ba = new FaultPlan(seed + 1, 0.05, 0.02, 0.02, 0.01);
        run("127.0.31.5", "127.0.31.6", ab, ba, 1024, -1, (STRESS ? 64 : 16) * MIB, seed);
        var rx = pair.b.qp.counters();
        assertTrue(rx.get(Counter.DUPLICATES_RECEIVED) > 0, "duplicates re-ACKed, seed " + seed + ": " + rx);
        assertTrue(rx.get(Counter.DROP_BAD_ICRC) > 0, "corrupted packets dropped, seed " + seed + ": " + rx);
        assertTrue(rx.get(Counter.NAKS_SENT) > 0, "sequence NAKs sent, seed " + seed + ": " + rx);
        assertTrue(pair.a.qp.counters().get(Counter.NAKS_RECEIVED) > 0, "seed " + seed);
        assertGathered(false);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void bothDirectionsAtOnce() throws Exception {
        long seed = 15;
        pair = new SoftPair(host("127.0.31.9"), host("127.0.31.10"), q -> q.ackTimeout(ACK_TIMEOUT));
        bothWays(pair, seed);
    }

    /** 8 MiB each way at once, each direction from a thread of its own; no device drops anything. */
    static void bothWays(SoftPair pair, long seed) throws Exception {
        Transfer ab = new Transfer(pair, seed, 5000);
        Transfer ba = new Transfer(pair.reversed(), seed + 1, 5000);
        java.util.concurrent.CompletableFuture<Void> other = java.util.concurrent.CompletableFuture.runAsync(() -> {
            try {
                ba.run(8 * MIB, Duration.ofSeconds(90));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        ab.run(8 * MIB, Duration.ofSeconds(90));
        other.get(100, TimeUnit.SECONDS);
        assertEquals(0, pair.a.device.counters().totalDrops(), "A device " + pair.a.device.counters());
        assertEquals(0, pair.b.device.counters().totalDrops(), "B device " + pair.b.device.counters());
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void initialPsnJustBelowWrapAtMtu4096() throws InterruptedException {
        long seed = 14;
        run("127.0.31.7", "127.0.31.8", FaultPlan.loss(seed, 0.01), FaultPlan.NONE, 4096, 0xFFFFFF - 40,
                8 * MIB, seed);
    }
}
