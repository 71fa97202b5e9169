package io.netreduce.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.verbs.Counter;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.FaultPlan;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import io.netreduce.wire.udp.NativeUdp;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The soft device with its pollers running the protocol ({@code soft.progress=caller}):
 * the event loop does (nearly) nothing while both sides poll, two threads driving the same
 * devices at once stay exact, and so does a lossy transfer whose timers the drives run.
 */
class SoftCallerProgressTest {
    private static final int ROUND_TRIPS = 3000;
    private static final Duration WAIT = Duration.ofSeconds(10);

    @BeforeAll
    static void nativeIo() {
        Assumptions.assumeTrue(NativeUdp.available(), "callers drive only with the native UDP I/O: "
                + NativeUdp.unavailableReason());
    }

    private static DeviceOptions.Builder host(String address, String progress) {
        return DeviceOptions.builder().localAddress(address).property(SoftProperties.PROGRESS, progress);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void whileBothSidesPollTheEventLoopsDoNoProtocolWork() throws Exception {
        long callerMode = pingPongLoopCpu("127.0.33.1", "127.0.33.2", "caller");
        long loopMode = pingPongLoopCpu("127.0.33.3", "127.0.33.4", "loop");
        // The loop mode's figure shows the measurement sees protocol work where it happens.
        assertTrue(loopMode > 20_000_000L, "event loops' CPU with soft.progress=loop: " + loopMode / 1000 + " us");
        assertTrue(callerMode < loopMode / 5, "event loops' CPU over " + ROUND_TRIPS + " round trips: caller "
                + callerMode / 1000 + " us, loop " + loopMode / 1000 + " us");
    }

    /** CPU nanoseconds the two devices' event loops spent over a ping-pong of 64-byte SENDs. */
    private static long pingPongLoopCpu(String a, String b, String progress) throws Exception {
        try (SoftPair pair = new SoftPair(host(a, progress), host(b, progress), q -> q)) {
            MemoryRegion ma = pair.a.register(4096);
            MemoryRegion mb = pair.b.register(4096);
            pingPong(pair, ma, mb, 200); // warm-up
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            long before = loopCpu(threads, a, b);
            pingPong(pair, ma, mb, ROUND_TRIPS);
            return loopCpu(threads, a, b) - before;
        }
    }

    private static long loopCpu(ThreadMXBean threads, String a, String b) {
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("soft-rdma-" + a + "-") || t.getName().startsWith("soft-rdma-" + b + "-")) {
                sum += Math.max(0, threads.getThreadCpuTime(t.getId()));
            }
        }
        return sum;
    }

    private static void pingPong(SoftPair pair, MemoryRegion ma, MemoryRegion mb, int rounds) throws Exception {
        CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
            try {
                serve(pair.b, mb, rounds);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        SendRequest sr = new SendRequest(1);
        RecvRequest rr = new RecvRequest(1);
        WorkCompletion[] wcs = new WorkCompletion[8];
        for (int i = 0; i < rounds; i++) {
            rr.reset().wrId(i).sgl().add(ma, 0, 64);
            pair.a.qp.postRecv(rr);
            sr.reset().wrId(i).sgl().add(ma, 64, 64);
            pair.a.qp.postSend(sr);
            await(pair.a.sendCq, wcs, "send " + i);
            await(pair.a.recvCq, wcs, "reply " + i);
        }
        echo.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    private static void serve(SoftPair.Host host, MemoryRegion mr, int rounds) throws InterruptedException {
        SendRequest sr = new SendRequest(1);
        RecvRequest rr = new RecvRequest(1);
        WorkCompletion[] wcs = new WorkCompletion[8];
        rr.reset().wrId(0).sgl().add(mr, 0, 64);
        host.qp.postRecv(rr);
        for (int i = 0; i < rounds; i++) {
            await(host.recvCq, wcs, "request " + i);
            if (i + 1 < rounds) {
                rr.reset().wrId(i + 1).sgl().add(mr, 0, 64);
                host.qp.postRecv(rr);
            }
            sr.reset().wrId(i).sgl().add(mr, 0, 64);
            host.qp.postSend(sr);
            await(host.sendCq, wcs, "echo " + i);
        }
    }

    private static void await(io.netreduce.verbs.CompletionQueue cq, WorkCompletion[] wcs, String what)
            throws InterruptedException {
        int n = cq.poll(wcs, WAIT);
        assertEquals(1, n, "one completion for " + what + " within " + WAIT);
        assertEquals(WcStatus.SUCCESS, wcs[0].status(), what + ": " + wcs[0]);
    }

    @Test
    void aCompletionQueueOfAnotherDeviceIsRefusedNamingWhy() {
        try (io.netreduce.verbs.Device a = io.netreduce.verbs.Verbs.open("soft", host("127.0.33.9", "caller").build());
             io.netreduce.verbs.Device b = io.netreduce.verbs.Verbs.open("soft", host("127.0.33.10", "caller").build())) {
            io.netreduce.verbs.CompletionQueue foreign = b.createCompletionQueue(16);
            io.netreduce.verbs.CompletionQueue own = a.createCompletionQueue(16);
            io.netreduce.verbs.VerbsException e = org.junit.jupiter.api.Assertions.assertThrows(
                    io.netreduce.verbs.VerbsException.class, () -> a.allocateProtectionDomain().createQueuePair(
                            io.netreduce.verbs.QpAttributes.builder(own, foreign).build()));
            assertTrue(e.getMessage().contains("receive completion queue belongs to another soft device"),
                    e.getMessage());
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void twoThreadsDrivingTheSameDevicesStayExact() throws Exception {
        long seed = 31;
        try (SoftPair pair = new SoftPair(host("127.0.33.5", "caller"), host("127.0.33.6", "caller"),
                q -> q.ackTimeout(Duration.ofMillis(500)))) {
            SoftTransferTest.bothWays(pair, seed);
        }
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void lossDuplicationReorderingAndCorruptionRecoveredByTheCallersDrives() throws Exception {
        long seed = 32;
        FaultPlan ab = new FaultPlan(seed, 0.05, 0.02, 0.02, 0.01);
        FaultPlan ba = new FaultPlan(seed + 1, 0.05, 0.02, 0.02, 0.01);
        try (SoftPair pair = new SoftPair(host("127.0.33.7", "caller").egressFaults(ab),
                host("127.0.33.8", "caller").egressFaults(ba), q -> q.mtu(1024).ackTimeout(Duration.ofMillis(500)))) {
            new Transfer(pair, seed, 3 * 1024 + 100).run(16 << 20, Duration.ofSeconds(120));
            assertTrue(pair.a.qp.counters().get(Counter.RETRANSMITTED_PACKETS) > 0, "seed " + seed);
            assertTrue(pair.b.qp.counters().get(Counter.DROP_BAD_ICRC) > 0, "seed " + seed);
        }
    }
}
