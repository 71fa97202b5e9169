package io.netreduce.verbs.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import io.netreduce.wire.tcp.TcpCongestionControl;
import io.netreduce.wire.udp.NativeUdp;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The congestion control the provider's connections get, read back from both ends of real connections. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TcpCongestionTest {

    private static Device open(String address, String congestion) {
        DeviceOptions.Builder b = DeviceOptions.builder().localAddress(address).port(0);
        if (congestion != null) {
            b.property(TcpVerbsProvider.CONGESTION, congestion);
        }
        return Verbs.open("tcp", b.build());
    }

    /** Connects a queue pair of each device to the other's, checks a message crosses, returns both ends' algorithms. */
    private static List<String> connectAndRead(String congestion) throws Exception {
        try (Device a = open("127.0.0.61", congestion); Device b = open("127.0.0.62", congestion)) {
            CompletionQueue cqa = a.createCompletionQueue(16);
            CompletionQueue cqb = b.createCompletionQueue(16);
            var pda = a.allocateProtectionDomain();
            var pdb = b.allocateProtectionDomain();
            TcpQueuePair x = (TcpQueuePair) pda.createQueuePair(QpAttributes.builder(cqa, cqa).build());
            TcpQueuePair y = (TcpQueuePair) pdb.createQueuePair(QpAttributes.builder(cqb, cqb).build());
            CompletableFuture<Void> other = CompletableFuture.runAsync(() -> y.connect(x.localEndpoint(), Duration.ofSeconds(10)));
            x.connect(y.localEndpoint(), Duration.ofSeconds(10));
            other.get(10, TimeUnit.SECONDS);
            MemoryRegion out = pda.register(ByteBuffer.allocateDirect(64).putInt(0, 0x5eed), EnumSet.of(Access.LOCAL_WRITE));
            MemoryRegion in = pdb.register(ByteBuffer.allocateDirect(64), EnumSet.of(Access.LOCAL_WRITE));
            RecvRequest r = new RecvRequest();
            r.sgl().add(in, 0, 64);
            y.postRecv(r.wrId(1));
            SendRequest s = new SendRequest();
            s.sgl().add(out, 0, 64);
            x.postSend(s.wrId(2));
            WorkCompletion[] wc = {new WorkCompletion()};
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (cqb.poll(wc, Duration.ofMillis(1)) == 0) {
                cqa.poll(new WorkCompletion[] {new WorkCompletion()}); // drive the sender's socket
                assertTrue(System.nanoTime() < deadline, "the message never arrived");
            }
            assertEquals(WcStatus.SUCCESS, wc[0].status());
            assertEquals(0x5eed, in.buffer().getInt(0), "the message crossed the connection");
            return List.of(String.valueOf(x.congestionControl()), String.valueOf(y.congestionControl()));
        }
    }

    private static String systemDefault() {
        String s = TcpCongestionControl.systemDefault();
        assumeTrue(s != null && NativeUdp.available(), "needs Linux and the native library: " + NativeUdp.describe());
        return s;
    }

    @Test
    void byDefaultBbrGivesWayToCubicAndAnyOtherSystemDefaultStays() throws Exception {
        String system = systemDefault();
        String expected = system.equals(TcpCongestion.PACED) ? TcpCongestion.UNPACED : system;
        System.out.println("TcpCongestionTest: system default " + system + ", expected " + expected);
        assertEquals(List.of(expected, expected), connectAndRead(null));
    }

    @Test
    void aNamedAlgorithmIsSetOnBothEnds() throws Exception {
        systemDefault();
        String allowed = Files.readString(Path.of("/proc/sys/net/ipv4/tcp_allowed_congestion_control"));
        assumeTrue(allowed.contains("reno"), "reno is not allowed here: " + allowed);
        assertEquals(List.of("reno", "reno"), connectAndRead("reno"));
    }

    @Test
    void systemKeepsTheSystemDefault() throws Exception {
        String system = systemDefault();
        assertEquals(List.of(system, system), connectAndRead(TcpCongestion.SYSTEM));
    }

    @Test
    void anAlgorithmTheKernelLacksLeavesTheConnectionWorkingOnTheSystemDefault() throws Exception {
        String system = systemDefault();
        assertEquals(List.of(system, system), connectAndRead("nosuchalgo"));
    }

    @Test
    void aValueThatIsNoAlgorithmsNameIsRefusedNamingTheSetting() {
        VerbsException e = assertThrows(VerbsException.class, () -> open("127.0.0.63", "cubic; rm").close());
        assertTrue(e.getMessage().contains(TcpVerbsProvider.CONGESTION) && e.getMessage().contains("cubic; rm"),
                e.getMessage());
    }
}
