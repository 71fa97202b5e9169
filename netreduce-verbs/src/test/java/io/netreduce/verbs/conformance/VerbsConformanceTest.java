package io.netreduce.verbs.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.Counter;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpState;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.SendOpcode;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The behaviour every verbs provider must show, run against a real provider through real
 * sockets. A provider runs it by subclassing with its {@link ProviderFixture}:
 *
 * <pre>
 * class SoftConformanceTest extends VerbsConformanceTest {
 *     protected ProviderFixture fixture() { return new ProviderFixture() {
 *         public String providerName() { return "soft"; } }; }
 * }
 * </pre>
 *
 * Where the fixture says the provider cannot run here (e.g. no RDMA device), every test is
 * reported as skipped with that reason.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
public abstract class VerbsConformanceTest {
    private static final long SEED = Long.getLong("netreduce.conformance.seed", 0x5EEDL);

    protected ProviderFixture fx;

    /** The provider under test. */
    protected abstract ProviderFixture fixture();

    @BeforeEach
    void requireProvider() {
        fx = fixture();
        String reason = fx.skipReason();
        assumeTrue(reason == null, () -> "'" + fx.providerName() + "' provider conformance skipped: " + reason);
    }

    // ------------------------------------------------------------------ selection and setup

    @Test
    void providerIsSelectedByNameAndUnknownNamesAreRefused() {
        String name = fx.providerName();
        assertEquals(name, Verbs.provider(name).name());
        assertEquals(name, Verbs.provider(name.toUpperCase(Locale.ROOT)).name(), "names are case-insensitive");
        try (Device d = fx.open(0)) {
            assertEquals(name, d.providerName());
        }
        VerbsException e = assertThrows(VerbsException.class, () -> Verbs.provider("no-such-provider"));
        assertTrue(e.getMessage().contains("no-such-provider") && e.getMessage().contains(name),
                "message names the unknown provider and lists the known ones: " + e.getMessage());
    }

    /** A misspelt setting fails the open, naming the keys the provider does read, instead of being ignored. */
    @Test
    void aDevicePropertyTheProviderDoesNotReadIsRefused() {
        String name = fx.providerName();
        String unknown = name + ".noSuchSetting";
        VerbsException e = assertThrows(VerbsException.class, () -> Verbs.open(name,
                DeviceOptions.Builder.from(fx.optionsFor(0)).property(unknown, "1").build()));
        assertTrue(e.getMessage().contains("'" + unknown + "'"), e.getMessage());
        for (String known : Verbs.provider(name).deviceProperties()) {
            assertTrue(e.getMessage().contains(known), "the message lists " + known + ": " + e.getMessage());
        }
    }

    @Test
    void heapBufferRegistrationIsRefused() {
        try (Device d = fx.open(0)) {
            ProtectionDomain pd = d.allocateProtectionDomain();
            VerbsException e = assertThrows(VerbsException.class,
                    () -> pd.register(ByteBuffer.allocate(4096), EnumSet.of(Access.LOCAL_WRITE)));
            assertTrue(e.getMessage().toLowerCase(Locale.ROOT).contains("direct"),
                    "message says a direct buffer is needed: " + e.getMessage());
        }
    }

    @Test
    void writeAccessToAReadOnlyBufferIsRefused() {
        try (Device d = fx.open(0)) {
            ProtectionDomain pd = d.allocateProtectionDomain();
            ByteBuffer readOnly = ByteBuffer.allocateDirect(4096).asReadOnlyBuffer();
            VerbsException e = assertThrows(VerbsException.class,
                    () -> pd.register(readOnly, EnumSet.of(Access.LOCAL_WRITE)));
            assertTrue(e.getMessage().contains("read-only"), "message says why: " + e.getMessage());
            assertThrows(VerbsException.class, () -> pd.register(readOnly, EnumSet.of(Access.REMOTE_WRITE)));
        }
    }

    @Test
    void registeredRegionExposesItsBuffer() {
        try (Device d = fx.open(0)) {
            ByteBuffer buf = ByteBuffer.allocateDirect(10_000);
            MemoryRegion mr = d.allocateProtectionDomain().register(buf, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
            assertEquals(10_000, mr.length());
            assertEquals(0, mr.buffer().position());
            assertEquals(10_000, mr.buffer().limit());
            mr.buffer().put(7, (byte) 42);
            assertEquals(42, buf.get(7), "the region is the registered memory, not a copy");
            assertThrows(VerbsException.class, () -> new SendRequest().sgl().add(mr, 9_000, 1_001),
                    "an SGE beyond the region is refused");
        }
    }

    @Test
    void postingBeforeConnectRefusesSendsButAcceptsReceives() {
        try (Device d = fx.open(0)) {
            ProtectionDomain pd = d.allocateProtectionDomain();
            var cq = d.createCompletionQueue(16);
            var qp = pd.createQueuePair(fx.tune(io.netreduce.verbs.QpAttributes.builder(cq, cq)).build());
            assertEquals(QpState.INIT, qp.state());
            MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(64), EnumSet.of(Access.LOCAL_WRITE));
            qp.postRecv(new RecvRequest().wrId(1));
            SendRequest send = new SendRequest().wrId(2);
            send.sgl().add(mr, 0, 64);
            assertThrows(VerbsException.class, () -> qp.postSend(send));
        }
    }

    /**
     * Every provider refuses a bad scatter-gather list at the post, the same way
     * ({@code io.netreduce.verbs.support.ScatterGather}): a VerbsException naming the queue
     * pair, the SGE and its lkey, and nothing queued, so the connection keeps working.
     */
    @Test
    void badScatterGatherListsAreRefusedAtThePostNamingTheSge() throws Exception {
        try (ConnectedPair p = new ConnectedPair(fx)) {
            MemoryRegion foreign = p.a.device.allocateProtectionDomain()
                    .register(ByteBuffer.allocateDirect(256), EnumSet.of(Access.LOCAL_WRITE));
            SendRequest send = new SendRequest().wrId(1);
            send.sgl().add(foreign, 0, 256);
            VerbsException e = assertThrows(VerbsException.class, () -> p.a.qp.postSend(send));
            assertTrue(e.getMessage().contains("SGE 0") && e.getMessage().contains(String.valueOf(foreign.lkey()))
                    && e.getMessage().contains("another protection domain"), e.getMessage());

            MemoryRegion gone = p.a.region(64);
            SendRequest stale = new SendRequest().wrId(2);
            stale.sgl().add(p.a.region(16), 0, 16).add(gone, 0, 64);
            gone.close();
            e = assertThrows(VerbsException.class, () -> p.a.qp.postSend(stale));
            assertTrue(e.getMessage().contains("SGE 1") && e.getMessage().contains("deregistered"), e.getMessage());

            MemoryRegion readOnly = p.b.pd.register(ByteBuffer.allocateDirect(64), EnumSet.noneOf(Access.class));
            e = assertThrows(VerbsException.class, () -> p.b.qp.postRecv(recv(3, readOnly, 0, 64)));
            assertTrue(e.getMessage().contains("LOCAL_WRITE"), e.getMessage());

            int maxSge = fx.tune(io.netreduce.verbs.QpAttributes.builder(p.a.sendCq, p.a.recvCq)).build().maxSge();
            SendRequest wide = new SendRequest(maxSge + 1).wrId(4);
            MemoryRegion src = p.a.region(64);
            for (int i = 0; i <= maxSge; i++) {
                wide.sgl().add(src, i, 1);
            }
            e = assertThrows(VerbsException.class, () -> p.a.qp.postSend(wide));
            assertTrue(e.getMessage().contains("SGEs"), e.getMessage());

            // Nothing was queued: a good message still goes through.
            MemoryRegion landing = p.b.region(64);
            p.b.qp.postRecv(recv(9, landing, 0, 64));
            SendRequest good = new SendRequest().wrId(5);
            good.sgl().add(src, 0, 64);
            p.a.qp.postSend(good);
            assertEquals(WcStatus.SUCCESS, p.a.pollSend().status());
            assertEquals(9, p.b.pollRecv().wrId());
        }
    }

    // ------------------------------------------------------------------ SEND / RECV

    @Test
    void sendRecvGatherScatterIsBitExactAcrossSizes() throws Exception {
        try (ConnectedPair p = new ConnectedPair(fx)) {
            int mtu = p.a.qp.mtu();
            int[] sizes = {0, 1, mtu - 1, mtu, mtu + 1, 5 * mtu + 3, 3 * 1024 * 1024 + 17};
            int max = sizes[sizes.length - 1];
            MemoryRegion src1 = p.a.region(max + 64);
            MemoryRegion src2 = p.a.region(max + 64);
            MemoryRegion dst1 = p.b.region(max + 64);
            MemoryRegion dst2 = p.b.region(max + 64);
            Random random = new Random(SEED);
            long id = 0;
            for (int size : sizes) {
                String ctx = "size " + size + ", seed " + SEED;
                byte[] data = new byte[size];
                random.nextBytes(data);
                // Gather: data[0..c1) from src1@5, [c1..c2) from src2@11, [c2..) from src1@(max/2 .. ) region end.
                int c1 = random.nextInt(size + 1);
                int c2 = c1 + random.nextInt(size - c1 + 1);
                put(src1, 5, data, 0, c1);
                put(src2, 11, data, c1, c2 - c1);
                put(src1, 5 + c1 + 7, data, c2, size - c2);
                // Scatter: different cut points, the last element has slack; sentinels around.
                int s1 = random.nextInt(size + 1);
                int s2 = s1 + random.nextInt(size - s1 + 1);
                fill(dst1, (byte) 0x5A);
                fill(dst2, (byte) 0x5A);
                RecvRequest r = new RecvRequest().wrId(++id);
                r.sgl().add(dst1, 3, s1).add(dst2, 1, s2 - s1).add(dst1, 3 + s1 + 9, size - s2 + 32);
                p.b.qp.postRecv(r);
                SendRequest s = new SendRequest().wrId(id + 1000);
                s.sgl().add(src1, 5, c1).add(src2, 11, c2 - c1).add(src1, 5 + c1 + 7, size - c2);
                p.a.qp.postSend(s);

                WorkCompletion sw = p.a.pollSend();
                assertEquals(WcStatus.SUCCESS, sw.status(), ctx + ": " + sw);
                assertEquals(id + 1000, sw.wrId(), ctx);
                assertEquals(WcOpcode.SEND, sw.opcode(), ctx);
                assertEquals(p.a.qp.qpn(), sw.qpn(), ctx);
                WorkCompletion rw = p.b.pollRecv();
                assertEquals(WcStatus.SUCCESS, rw.status(), ctx + ": " + rw);
                assertEquals(id, rw.wrId(), ctx);
                assertEquals(WcOpcode.RECV, rw.opcode(), ctx);
                assertEquals(size, rw.byteLength(), ctx);
                assertEquals(p.b.qp.qpn(), rw.qpn(), ctx);
                assertFalse(rw.hasImmediate(), ctx);

                byte[] got = new byte[size];
                get(dst1, 3, got, 0, s1);
                get(dst2, 1, got, s1, s2 - s1);
                get(dst1, 3 + s1 + 9, got, s2, size - s2);
                assertArrayEquals(data, got, ctx + ": payload differs");
                assertEquals(0x5A, dst1.buffer().get(2), ctx + ": byte before the first SGE untouched");
                assertEquals(0x5A, dst2.buffer().get(1 + s2 - s1), ctx + ": byte after the second SGE untouched");
                assertEquals(0x5A, dst1.buffer().get(3 + s1 + 9 + size - s2), ctx + ": slack after the message untouched");
            }
        }
    }

    @Test
    void sendWithImmediateDeliversTheImmediate() throws Exception {
        try (ConnectedPair p = new ConnectedPair(fx)) {
            MemoryRegion src = p.a.region(100);
            MemoryRegion dst = p.b.region(100);
            p.b.qp.postRecv(recv(1, dst, 0, 100));
            SendRequest s = new SendRequest().wrId(2).opcode(SendOpcode.SEND_WITH_IMM).immediate(0xCAFEBABE);
            s.sgl().add(src, 0, 40);
            p.a.qp.postSend(s);
            WorkCompletion rw = p.b.pollRecv();
            assertEquals(WcStatus.SUCCESS, rw.status(), rw.toString());
            assertEquals(WcOpcode.RECV, rw.opcode());
            assertTrue(rw.hasImmediate());
            assertEquals(0xCAFEBABE, rw.immediate());
            assertEquals(40, rw.byteLength());
            assertEquals(WcStatus.SUCCESS, p.a.pollSend().status());
        }
    }

    @Test
    void unsignaledSendsCompleteSilently() throws Exception {
        try (ConnectedPair p = new ConnectedPair(fx)) {
            MemoryRegion src = p.a.region(64);
            MemoryRegion dst = p.b.region(128);
            p.b.qp.postRecv(recv(1, dst, 0, 64));
            p.b.qp.postRecv(recv(2, dst, 64, 64));
            SendRequest s = new SendRequest().wrId(10).signaled(false);
            s.sgl().add(src, 0, 64);
            p.a.qp.postSend(s);
            p.a.qp.postSend(s.wrId(11).signaled(true));
            WorkCompletion wc = p.a.pollSend();
            assertEquals(11, wc.wrId(), "only the signaled send reports: " + wc);
            assertEquals(1, p.b.pollRecv().wrId());
            assertEquals(2, p.b.pollRecv().wrId());
            p.a.assertNoCompletion(p.a.sendCq, Duration.ofMillis(50));
        }
    }

    @Test
    void receivesPostedBeforeConnectAreUsed() throws Exception {
        try (ConnectedPair h = ConnectedPair.unconnected(fx)) {
            MemoryRegion dst = h.b.region(64);
            h.b.qp.postRecv(recv(77, dst, 0, 64));
            ConnectedPair.connect(h.a.qp, h.b.qp, fx.connectTimeout());
            MemoryRegion src = h.a.region(64);
            put(src, 0, new byte[] {1, 2, 3}, 0, 3);
            SendRequest s = new SendRequest().wrId(1);
            s.sgl().add(src, 0, 3);
            h.a.qp.postSend(s);
            WorkCompletion rw = h.b.pollRecv();
            assertEquals(77, rw.wrId());
            assertEquals(3, rw.byteLength());
            assertEquals(3, dst.buffer().get(2));
        }
    }

    // ------------------------------------------------------------------ RDMA WRITE

    @Test
    void rdmaWriteLandsDataWithoutConsumingAReceive() throws Exception {
        try (ConnectedPair p = new ConnectedPair(fx)) {
            int size = 3 * p.a.qp.mtu() + 5;
            MemoryRegion src = p.a.region(size);
            MemoryRegion target = p.b.region(size + 100);
            MemoryRegion dst = p.b.region(16);
            byte[] data = randomBytes(size, SEED + 1);
            put(src, 0, data, 0, size);
            p.b.qp.postRecv(recv(5, dst, 0, 16));
            SendRequest w = new SendRequest().wrId(1).opcode(SendOpcode.RDMA_WRITE).remote(target.address() + 50, target.rkey());
            w.sgl().add(src, 0, size / 2).add(src, size / 2, size - size / 2);
            p.a.qp.postSend(w);
            WorkCompletion sw = p.a.pollSend();
            assertEquals(WcStatus.SUCCESS, sw.status(), sw.toString());
            assertEquals(WcOpcode.RDMA_WRITE, sw.opcode());
            byte[] got = new byte[size];
            get(target, 50, got, 0, size);
            assertArrayEquals(data, got, "RDMA WRITE payload, seed " + (SEED + 1));
            // The posted receive is still there: the next SEND consumes it.
            SendRequest s = new SendRequest().wrId(2);
            s.sgl().add(src, 0, 16);
            p.a.qp.postSend(s);
            WorkCompletion rw = p.b.pollRecv();
            assertEquals(5, rw.wrId());
            assertEquals(WcOpcode.RECV, rw.opcode(), "the RDMA WRITE did not consume the receive: " + rw);
        }
    }

    @Test
    void rdmaWriteWithImmediateCompletesAReceive() throws Exception {
        try (ConnectedPair p = new ConnectedPair(fx)) {
            MemoryRegion src = p.a.region(4096);
            MemoryRegion target = p.b.region(4096);
            MemoryRegion dst = p.b.region(16);
            byte[] data = randomBytes(4096, SEED + 2);
            put(src, 0, data, 0, 4096);
            p.b.qp.postRecv(recv(8, dst, 0, 16));
            SendRequest w = new SendRequest().wrId(1).opcode(SendOpcode.RDMA_WRITE_WITH_IMM).immediate(0x1234_5678)
                    .remote(target.address(), target.rkey());
            w.sgl().add(src, 0, 4096);
            p.a.qp.postSend(w);
            WorkCompletion rw = p.b.pollRecv();
            assertEquals(WcStatus.SUCCESS, rw.status(), rw.toString());
            assertEquals(8, rw.wrId());
            assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, rw.opcode());
            assertTrue(rw.hasImmediate());
            assertEquals(0x1234_5678, rw.immediate());
            byte[] got = new byte[4096];
            get(target, 0, got, 0, 4096);
            assertArrayEquals(data, got, "data landed before the immediate completed, seed " + (SEED + 2));
            assertEquals(WcOpcode.RDMA_WRITE, p.a.pollSend().opcode());
        }
    }

    @Test
    void rdmaWriteWithBadRkeyFailsWithRemoteAccessErrorAndFlushesLaterWork() throws Exception {
        try (ConnectedPair p = new ConnectedPair(fx)) {
            MemoryRegion src = p.a.region(256);
            MemoryRegion target = p.b.region(256);
            fill(target, (byte) 0x77);
            put(src, 0, randomBytes(256, SEED), 0, 256);
            SendRequest w = new SendRequest().wrId(1).opcode(SendOpcode.RDMA_WRITE)
                    .remote(target.address(), target.rkey() ^ 0x00F0_0000);
            w.sgl().add(src, 0, 256);
            p.a.qp.postSend(w);
            WorkCompletion wc = p.a.pollSend();
            assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(), wc.toString());
            assertEquals(1, wc.wrId());
            assertErrorState(p.a);
            assertEquals(0x77, target.buffer().get(0), "nothing was written");
            p.a.qp.postSend(w.wrId(2).remote(target.address(), target.rkey()));
            WorkCompletion flushed = p.a.pollSend();
            assertEquals(WcStatus.WR_FLUSH_ERR, flushed.status(), "later work is flushed: " + flushed);
            assertEquals(2, flushed.wrId());
        }
    }

    @Test
    void rdmaWriteOutsideTheRegionFailsWithRemoteAccessError() throws Exception {
        try (ConnectedPair p = new ConnectedPair(fx)) {
            MemoryRegion src = p.a.region(256);
            MemoryRegion target = p.b.region(256);
            SendRequest w = new SendRequest().wrId(1).opcode(SendOpcode.RDMA_WRITE)
                    .remote(target.address() + 200, target.rkey());
            w.sgl().add(src, 0, 100);
            p.a.qp.postSend(w);
            WorkCompletion wc = p.a.pollSend();
            assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(), wc.toString());
            assertErrorState(p.a);
        }
    }

    // ------------------------------------------------------------------ errors

    @Test
    void receiveTooSmallGivesLocalLengthErrorAndBothSidesFail() throws Exception {
        try (ConnectedPair p = new ConnectedPair(fx)) {
            MemoryRegion src = p.a.region(2000);
            MemoryRegion dst = p.b.region(2000);
            p.b.qp.postRecv(recv(1, dst, 0, 1000));
            p.b.qp.postRecv(recv(2, dst, 1000, 1000));
            SendRequest s = new SendRequest().wrId(3);
            s.sgl().add(src, 0, 1500);
            p.a.qp.postSend(s);
            WorkCompletion rw = p.b.pollRecv();
            assertEquals(WcStatus.LOC_LEN_ERR, rw.status(), rw.toString());
            assertEquals(1, rw.wrId());
            WorkCompletion flushed = p.b.pollRecv();
            assertEquals(WcStatus.WR_FLUSH_ERR, flushed.status(), "the other receive is flushed: " + flushed);
            WorkCompletion sw = p.a.pollSend();
            assertEquals(WcStatus.REM_INV_REQ_ERR, sw.status(), sw.toString());
            assertErrorState(p.a);
            assertErrorState(p.b);
        }
    }

    @Test
    void receivePostedLateIsStillDelivered() throws Exception {
        try (ConnectedPair p = new ConnectedPair(fx)) {
            MemoryRegion src = p.a.region(4096);
            MemoryRegion dst = p.b.region(4096);
            byte[] data = randomBytes(4096, SEED + 3);
            put(src, 0, data, 0, 4096);
            SendRequest s = new SendRequest().wrId(1);
            s.sgl().add(src, 0, 4096);
            p.a.qp.postSend(s);
            p.a.assertNoCompletion(p.a.sendCq, Duration.ofMillis(150));
            p.b.qp.postRecv(recv(2, dst, 0, 4096));
            WorkCompletion rw = p.b.pollRecv();
            assertEquals(WcStatus.SUCCESS, rw.status(), rw.toString());
            byte[] got = new byte[4096];
            get(dst, 0, got, 0, 4096);
            assertArrayEquals(data, got, "seed " + (SEED + 3));
            assertEquals(WcStatus.SUCCESS, p.a.pollSend().status());
            if (fx.countsTransportEvents()) {
                assertTrue(p.a.qp.counters().get(Counter.RNR_NAKS_RECEIVED) > 0, "RNR NAKs: " + p.a.qp.counters());
                assertTrue(p.b.qp.counters().get(Counter.RNR_NAKS_SENT) > 0, "RNR NAKs: " + p.b.qp.counters());
            }
        }
    }

    @Test
    void rnrRetriesExhaustedFailTheSend() throws Exception {
        try (ConnectedPair p = new ConnectedPair(fx, b -> b.rnrRetry(2),
                b -> b.minRnrTimer(Duration.ofMillis(2)))) {
            MemoryRegion src = p.a.region(64);
            SendRequest s = new SendRequest().wrId(1);
            s.sgl().add(src, 0, 64);
            p.a.qp.postSend(s);
            WorkCompletion wc = p.a.pollSend();
            assertEquals(WcStatus.RNR_RETRY_EXC_ERR, wc.status(), wc.toString());
            assertErrorState(p.a);
        }
    }

    @Test
    void peerThatVanishesSurfacesAsErrorsAndLaterWorkIsFlushed() throws Exception {
        try (ConnectedPair p = new ConnectedPair(fx)) {
            MemoryRegion src = p.a.region(64);
            MemoryRegion dst = p.a.region(128);
            p.a.qp.postRecv(recv(1, dst, 0, 64));
            p.a.qp.postRecv(recv(2, dst, 64, 64));
            long start = System.nanoTime();
            p.b.device.close();
            SendRequest s = new SendRequest().wrId(3);
            s.sgl().add(src, 0, 64);
            p.a.qp.postSend(s);
            WorkCompletion sw = p.a.pollSend();
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(sw.status() == WcStatus.RETRY_EXC_ERR || sw.status() == WcStatus.WR_FLUSH_ERR,
                    "send to a vanished peer fails: " + sw);
            assertTrue(elapsedMs <= fx.peerLossDeadline().toMillis() + 2_000,
                    "failure reported after " + elapsedMs + " ms, deadline " + fx.peerLossDeadline());
            assertErrorState(p.a);
            for (int id = 1; id <= 2; id++) {
                WorkCompletion rw = p.a.pollRecv();
                assertEquals(WcStatus.WR_FLUSH_ERR, rw.status(), rw.toString());
                assertEquals(id, rw.wrId());
            }
            p.a.qp.postSend(s.wrId(4));
            WorkCompletion later = p.a.pollSend();
            assertEquals(WcStatus.WR_FLUSH_ERR, later.status(), later.toString());
            assertEquals(4, later.wrId());
            p.a.qp.postRecv(recv(5, dst, 0, 64));
            assertEquals(WcStatus.WR_FLUSH_ERR, p.a.pollRecv().status());
        }
    }

    @Test
    void fullSendQueueRefusesFurtherPosts() throws Exception {
        try (ConnectedPair p = new ConnectedPair(fx, b -> b.maxSendWr(4), b -> b)) {
            MemoryRegion src = p.a.region(64);
            SendRequest s = new SendRequest();
            s.sgl().add(src, 0, 64);
            for (int i = 0; i < 4; i++) {
                p.a.qp.postSend(s.wrId(i)); // no receive posted: none of these can complete
            }
            VerbsException e = assertThrows(VerbsException.class, () -> p.a.qp.postSend(s.wrId(4)));
            assertTrue(e.getMessage().contains("full"), e.getMessage());
        }
    }

    // ------------------------------------------------------------------ ordering and volume

    /**
     * A queue pair that sends too may hold back the ACK of a receive for its next send to
     * carry (a software provider's AckHold). Once its side has all it waits for and releases
     * that ACK ({@link io.netreduce.verbs.QueuePair#releaseHeldAck}), the peer's send must
     * complete although this side never polls again, as a collective that has finished and
     * returned to an application that computes. Each round: B sends, A receives it and
     * replies (its reply carries its ACK), B polls its send's completion and A's reply,
     * releases and stops; A's reply must then complete promptly, not at the provider's idle
     * drive (10 ms or more after B's last poll). The median of the rounds decides, so one
     * descheduled thread does not.
     */
    @Test
    void aReleasedAckLetsThePeersSendCompleteWhileThisSideStopsPolling() throws Exception {
        try (ConnectedPair p = new ConnectedPair(fx)) {
            MemoryRegion ma = p.a.region(128);
            MemoryRegion mb = p.b.region(128);
            long[] waitNanos = new long[15];
            for (int round = 0; round < waitNanos.length; round++) {
                p.a.qp.postRecv(recv(round, ma, 64, 64));
                p.b.qp.postRecv(recv(round, mb, 64, 64));
                SendRequest fromB = new SendRequest().wrId(round);
                fromB.sgl().add(mb, 0, 64);
                p.b.qp.postSend(fromB);
                assertEquals(WcStatus.SUCCESS, p.a.pollRecv().status());
                SendRequest reply = new SendRequest().wrId(round);
                reply.sgl().add(ma, 0, 64);
                p.a.qp.postSend(reply);
                assertEquals(WcStatus.SUCCESS, p.b.pollSend().status());
                assertEquals(WcStatus.SUCCESS, p.b.pollRecv().status());
                p.b.qp.releaseHeldAck();
                long t0 = System.nanoTime();
                assertEquals(WcStatus.SUCCESS, p.a.pollSend().status());
                waitNanos[round] = System.nanoTime() - t0;
            }
            long[] sorted = waitNanos.clone();
            java.util.Arrays.sort(sorted);
            long median = sorted[sorted.length / 2];
            assertTrue(median < TimeUnit.MILLISECONDS.toNanos(5), "A's reply completed a median "
                    + median / 1000 + " us after B released its ACK and stopped polling (rounds, us: "
                    + java.util.Arrays.toString(java.util.Arrays.stream(waitNanos).map(n -> n / 1000).toArray()) + ")");
        }
    }

    @Test
    void manyMessagesInFlightCompleteInOrder() throws Exception {
        try (ConnectedPair p = new ConnectedPair(fx)) {
            int mtu = p.a.qp.mtu();
            int window = 128;
            int messages = 3000;
            int slot = 3 * mtu;
            MemoryRegion src = p.a.region(window * slot);
            MemoryRegion dst = p.b.region(window * slot);
            Random sizes = new Random(SEED + 4);
            int[] length = new int[messages];
            for (int i = 0; i < messages; i++) {
                length[i] = sizes.nextInt(slot + 1);
            }
            for (int i = 0; i < window; i++) {
                p.b.qp.postRecv(recv(i, dst, i * slot, slot));
            }
            SendRequest s = new SendRequest();
            WorkCompletion[] wcs = new WorkCompletion[32];
            for (int i = 0; i < wcs.length; i++) {
                wcs[i] = new WorkCompletion();
            }
            int posted = 0;
            int sent = 0;
            int received = 0;
            byte[] expect = new byte[slot];
            byte[] got = new byte[slot];
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (received < messages || sent < messages) {
                assertTrue(System.nanoTime() < deadline, "stalled: posted " + posted + ", sent " + sent
                        + ", received " + received + ", seed " + SEED);
                while (posted < messages && posted - sent < window) {
                    int off = (posted % window) * slot;
                    pattern(posted, expect, length[posted]);
                    put(src, off, expect, 0, length[posted]);
                    s.reset().wrId(posted).sgl().add(src, off, length[posted]);
                    p.a.qp.postSend(s);
                    posted++;
                }
                int n = p.a.sendCq.poll(wcs);
                for (int i = 0; i < n; i++) {
                    assertEquals(WcStatus.SUCCESS, wcs[i].status(), wcs[i].toString());
                    assertEquals(sent, wcs[i].wrId(), "send completions in posting order");
                    sent++;
                }
                n = p.b.recvCq.poll(wcs, Duration.ofMillis(1));
                for (int i = 0; i < n; i++) {
                    WorkCompletion wc = wcs[i];
                    assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                    assertEquals(received % window, wc.wrId(), "receive completions in posting order");
                    assertEquals(length[received], wc.byteLength(), "message " + received);
                    pattern(received, expect, length[received]);
                    get(dst, (int) wc.wrId() * slot, got, 0, length[received]);
                    assertTrue(java.util.Arrays.equals(expect, 0, length[received], got, 0, length[received]),
                            "message " + received + " payload, seed " + SEED);
                    if (received + window < messages) {
                        p.b.qp.postRecv(recv(wc.wrId(), dst, (int) wc.wrId() * slot, slot));
                    }
                    received++;
                }
            }
            if (fx.countsTransportEvents()) {
                assertTrue(p.a.qp.counters().get(Counter.MESSAGES_SENT) >= messages, p.a.qp.counters().toString());
                assertTrue(p.b.qp.counters().get(Counter.MESSAGES_RECEIVED) >= messages, p.b.qp.counters().toString());
            }
        }
    }

    @Test
    void bulkTrafficInBothDirectionsAtOnceDoesNotStall() throws Exception {
        try (ConnectedPair p = new ConnectedPair(fx)) {
            int size = 1 << 20;
            int count = 16;
            MemoryRegion srcA = p.a.region(size);
            MemoryRegion srcB = p.b.region(size);
            MemoryRegion dstA = p.a.region(size);
            MemoryRegion dstB = p.b.region(size);
            put(srcA, 0, randomBytes(size, SEED + 5), 0, size);
            put(srcB, 0, randomBytes(size, SEED + 6), 0, size);
            for (int i = 0; i < count; i++) {
                p.a.qp.postRecv(recv(i, dstA, 0, size));
                p.b.qp.postRecv(recv(i, dstB, 0, size));
            }
            SendRequest s = new SendRequest();
            for (int i = 0; i < count; i++) {
                s.reset().wrId(i).sgl().add(srcA, 0, size);
                p.a.qp.postSend(s);
                s.reset().wrId(i).sgl().add(srcB, 0, size);
                p.b.qp.postSend(s);
            }
            for (int i = 0; i < count; i++) {
                assertEquals(WcStatus.SUCCESS, p.a.pollSend().status());
                assertEquals(WcStatus.SUCCESS, p.b.pollSend().status());
                assertEquals(WcStatus.SUCCESS, p.a.pollRecv().status());
                assertEquals(WcStatus.SUCCESS, p.b.pollRecv().status());
            }
            byte[] got = new byte[size];
            get(dstB, 0, got, 0, size);
            assertArrayEquals(randomBytes(size, SEED + 5), got, "a -> b payload");
            get(dstA, 0, got, 0, size);
            assertArrayEquals(randomBytes(size, SEED + 6), got, "b -> a payload");
        }
    }

    // ------------------------------------------------------------------ completion queue and counters

    @Test
    void blockingPollHonoursItsDeadline() throws Exception {
        try (Device d = fx.open(0)) {
            var cq = d.createCompletionQueue(8);
            WorkCompletion[] out = {new WorkCompletion()};
            assertEquals(0, cq.poll(out));
            long start = System.nanoTime();
            assertEquals(0, cq.poll(out, Duration.ofMillis(200)));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(ms >= 190 && ms < 2_000, "an empty blocking poll of 200 ms took " + ms + " ms");
            assertEquals(8, cq.capacity());
        }
    }

    @Test
    void countersMoveWithTraffic() throws Exception {
        assumeTrue(fx.countsTransportEvents(), "provider keeps no transport counters");
        try (ConnectedPair p = new ConnectedPair(fx)) {
            MemoryRegion src = p.a.region(10_000);
            MemoryRegion dst = p.b.region(10_000);
            p.b.qp.postRecv(recv(1, dst, 0, 10_000));
            SendRequest s = new SendRequest().wrId(1);
            s.sgl().add(src, 0, 10_000);
            p.a.qp.postSend(s);
            assertEquals(WcStatus.SUCCESS, p.a.pollSend().status());
            assertEquals(WcStatus.SUCCESS, p.b.pollRecv().status());
            assertEquals(1, p.a.qp.counters().get(Counter.MESSAGES_SENT), p.a.qp.counters().toString());
            assertTrue(p.a.qp.counters().get(Counter.BYTES_SENT) >= 10_000, p.a.qp.counters().toString());
            assertTrue(p.a.qp.counters().get(Counter.PACKETS_SENT) >= 1, p.a.qp.counters().toString());
            assertEquals(1, p.b.qp.counters().get(Counter.MESSAGES_RECEIVED), p.b.qp.counters().toString());
            assertTrue(p.b.qp.counters().get(Counter.BYTES_RECEIVED) >= 10_000, p.b.qp.counters().toString());
            assertNotEquals(0, p.b.qp.counters().get(Counter.PACKETS_RECEIVED));
        }
    }

    // ------------------------------------------------------------------ helpers

    private static void assertErrorState(ConnectedPair.Side side) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (side.qp.state() != QpState.ERROR && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(QpState.ERROR, side.qp.state(), "QP " + side.qp.qpn() + " state");
    }

    static RecvRequest recv(long wrId, MemoryRegion mr, int offset, int length) {
        RecvRequest r = new RecvRequest().wrId(wrId);
        r.sgl().add(mr, offset, length);
        return r;
    }

    static byte[] randomBytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Message {@code i}'s content: its index then bytes derived from it, so a swap or shift shows. */
    private static void pattern(int i, byte[] out, int len) {
        for (int k = 0; k < len; k++) {
            out[k] = (byte) (i * 31 + k * 7 + (k >> 8));
        }
    }

    static void put(MemoryRegion mr, int offset, byte[] src, int from, int len) {
        mr.buffer().position(offset).put(src, from, len);
    }

    static void get(MemoryRegion mr, int offset, byte[] dst, int to, int len) {
        mr.buffer().position(offset).get(dst, to, len);
    }

    static void fill(MemoryRegion mr, byte value) {
        ByteBuffer b = mr.buffer();
        while (b.hasRemaining()) {
            b.put(value);
        }
    }

}
