package io.netreduce.collectives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.collectives.spi.CommunicatorProvider;
import io.netreduce.verbs.Verbs;
import java.net.URI;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigurationTest {

    @Test
    void readsTorchrunVariables() {
        CommunicatorConfig c = CommunicatorConfig.fromEnvironment(Map.of("RANK", "3", "WORLD_SIZE", "8",
                "MASTER_ADDR", "10.0.0.1", "MASTER_PORT", "1234"));
        assertEquals(3, c.rank());
        assertEquals(8, c.worldSize());
        assertEquals("10.0.0.1", c.masterAddress());
        assertEquals(1234, c.masterPort());
        assertTrue(c.sources().get(0).contains("torchrun"), c.sources().toString());
    }

    @Test
    void readsOpenMpiAndSlurmVariables() {
        CommunicatorConfig mpi = CommunicatorConfig.fromEnvironment(Map.of("OMPI_COMM_WORLD_RANK", "1",
                "OMPI_COMM_WORLD_SIZE", "4", "NETREDUCE_MASTER_ADDR", "node0"));
        assertEquals(1, mpi.rank());
        assertEquals(4, mpi.worldSize());
        assertEquals("node0", mpi.masterAddress());
        assertEquals(CommunicatorConfig.DEFAULT_MASTER_PORT, mpi.masterPort());
        CommunicatorConfig slurm = CommunicatorConfig.fromEnvironment(Map.of("SLURM_PROCID", "5", "SLURM_NTASKS", "6"));
        assertEquals(5, slurm.rank());
        assertEquals(6, slurm.worldSize());
    }

    @Test
    void netreduceVariablesTakePrecedenceAndSetEverything() {
        CommunicatorConfig c = CommunicatorConfig.fromEnvironment(Map.ofEntries(
                Map.entry("NETREDUCE_RANK", "2"), Map.entry("NETREDUCE_WORLD_SIZE", "4"),
                Map.entry("RANK", "0"), Map.entry("WORLD_SIZE", "2"),
                Map.entry("NETREDUCE_ALGORITHM", "Ring"), Map.entry("NETREDUCE_TRANSPORT", "tcp"),
                Map.entry("NETREDUCE_SWITCH", "127.0.0.1:4792"), Map.entry("NETREDUCE_WINDOW", "8"),
                Map.entry("NETREDUCE_MESSAGE_BYTES", "8192"), Map.entry("NETREDUCE_MTU", "2048"),
                Map.entry("NETREDUCE_RING_WINDOW", "6"), Map.entry("NETREDUCE_RING_MESSAGE_BYTES", "65536"),
                Map.entry("NETREDUCE_TIMEOUT_SECONDS", "2.5"), Map.entry("NETREDUCE_LOCAL_ADDR", "127.0.0.9")));
        assertEquals(2, c.rank());
        assertEquals(4, c.worldSize());
        assertEquals("ring", c.algorithm());
        assertEquals("tcp", c.transport());
        assertEquals(4792, c.switchAddress().getPort());
        assertEquals(URI.create("http://127.0.0.1:" + CommunicatorConfig.DEFAULT_SWITCH_CONTROL_PORT), c.switchControl());
        assertEquals(8, c.window());
        assertEquals(8192, c.messageBytes());
        assertEquals(6, c.ringWindow());
        assertEquals(65536, c.ringMessageBytes());
        assertEquals(2048, c.mtu());
        assertEquals(Duration.ofMillis(2500), c.timeout());
        assertEquals("127.0.0.9", c.localAddress());
    }

    @Test
    void defaultsAreAWorldOfOneWithThirtySecondTimeout() {
        CommunicatorConfig c = CommunicatorConfig.fromEnvironment(Map.of());
        assertEquals(0, c.rank());
        assertEquals(1, c.worldSize());
        assertEquals(Duration.ofSeconds(30), c.timeout());
        assertEquals("netreduce", c.algorithm());
        assertNull(c.switchAddress());
    }

    @Test
    void smallTensorThresholdFollowsTheGroupSizeUnlessSet() {
        CommunicatorConfig auto = CommunicatorConfig.fromEnvironment(Map.of());
        assertEquals(CommunicatorConfig.AUTO_SMALL_TENSOR_BYTES, auto.smallTensorBytes());
        assertEquals(256 << 10, auto.smallTensorBytes(2));
        assertEquals(128 << 10, auto.smallTensorBytes(4)); // recursive doubling takes them
        assertEquals((1 << 20) / 9, auto.smallTensorBytes(3)); // the gather does
        assertEquals(32 << 10, auto.smallTensorBytes(8));
        CommunicatorConfig noPartners = CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_HALVING_DOUBLING_BYTES", "0"));
        assertEquals(64 << 10, noPartners.smallTensorBytes(4));
        assertEquals(16 << 10, noPartners.smallTensorBytes(8));
        assertEquals(16 << 10, auto.smallTensorBytes(64));
        assertEquals(256 << 10, auto.smallTensorBytes(1));
        CommunicatorConfig set = CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_SMALL_TENSOR_BYTES", "0"));
        assertEquals(0, set.smallTensorBytes(2));
        assertThrows(IllegalArgumentException.class,
                () -> CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_SMALL_TENSOR_BYTES", "-1")));
    }

    @Test
    void ringMessageSizeFollowsTheTransportUnlessSet() {
        CommunicatorConfig auto = CommunicatorConfig.fromEnvironment(Map.of());
        assertEquals(CommunicatorConfig.AUTO_RING_MESSAGE_BYTES, auto.ringMessageBytes());
        assertTrue(auto.toString().contains("ringMessageBytes=auto"), auto.toString());
        // The providers' own capabilities: soft cuts messages into packets, tcp carries a byte stream.
        assertEquals(CommunicatorConfig.PACKET_RING_MESSAGE_BYTES, auto.ringMessageBytes(Verbs.provider("soft").capabilities()));
        assertEquals(CommunicatorConfig.STREAM_RING_MESSAGE_BYTES, auto.ringMessageBytes(Verbs.provider("tcp").capabilities()));
        assertEquals(256 << 10, CommunicatorConfig.PACKET_RING_MESSAGE_BYTES);
        assertEquals(1 << 20, CommunicatorConfig.STREAM_RING_MESSAGE_BYTES);
        CommunicatorConfig set = CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_RING_MESSAGE_BYTES", "65536"));
        assertEquals(65536, set.ringMessageBytes(Verbs.provider("tcp").capabilities()));
        assertEquals(65536, set.ringMessageBytes(Verbs.provider("soft").capabilities()));
        assertTrue(set.toString().contains("ringMessageBytes=65536"), set.toString());
        assertThrows(IllegalArgumentException.class,
                () -> CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_RING_MESSAGE_BYTES", "-1")));
        assertThrows(IllegalArgumentException.class,
                () -> CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_RING_MESSAGE_BYTES", "0")));
    }

    @Test
    void devicePropertiesAreEmptyByDefaultAndKeptByToBuilder() {
        assertEquals(Map.of(), CommunicatorConfig.fromEnvironment(Map.of()).deviceProperties());
        CommunicatorConfig c = CommunicatorConfig.builder().deviceProperty("tcp.spinMicros", "0").build();
        assertEquals(Map.of("tcp.spinMicros", "0"), c.deviceProperties());
        assertEquals(c.deviceProperties(), c.toBuilder().build().deviceProperties());
        assertThrows(UnsupportedOperationException.class, () -> c.deviceProperties().put("tcp.progress", "poll"));
        assertTrue(c.toString().contains("tcp.spinMicros=0"), c.toString());
    }

    @Test
    void halvingDoublingThresholdDefaultsAndIsSetFromTheEnvironment() {
        assertEquals(2 << 20, CommunicatorConfig.fromEnvironment(Map.of()).halvingDoublingBytes());
        assertEquals(0, CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_HALVING_DOUBLING_BYTES", "0"))
                .halvingDoublingBytes());
        assertEquals(65536, CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_HALVING_DOUBLING_BYTES", "65536"))
                .halvingDoublingBytes());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_HALVING_DOUBLING_BYTES", "-1")));
        assertTrue(e.getMessage().contains("NETREDUCE_HALVING_DOUBLING_BYTES"), e.getMessage());
    }

    @Test
    void readsHostGroupingFromLaunchersAndSettings() {
        CommunicatorConfig torchrun = CommunicatorConfig.fromEnvironment(Map.of("RANK", "5", "WORLD_SIZE", "8",
                "LOCAL_RANK", "1", "LOCAL_WORLD_SIZE", "4"));
        assertEquals(1, torchrun.localRank());
        assertEquals(4, torchrun.localWorldSize());
        CommunicatorConfig mpi = CommunicatorConfig.fromEnvironment(Map.of("OMPI_COMM_WORLD_RANK", "3",
                "OMPI_COMM_WORLD_SIZE", "4", "OMPI_COMM_WORLD_LOCAL_RANK", "3", "OMPI_COMM_WORLD_LOCAL_SIZE", "4",
                "NETREDUCE_MASTER_ADDR", "node0:4000"));
        assertEquals(3, mpi.localRank());
        assertEquals("node0", mpi.masterAddress());
        assertEquals(4000, mpi.masterPort());
        CommunicatorConfig slurm = CommunicatorConfig.fromEnvironment(Map.of("SLURM_PROCID", "5", "SLURM_NTASKS", "6",
                "SLURM_LOCALID", "2"));
        assertEquals(2, slurm.localRank());
        CommunicatorConfig none = CommunicatorConfig.fromEnvironment(Map.of("RANK", "0", "WORLD_SIZE", "2"));
        assertEquals(-1, none.localRank());
        assertEquals(0, none.hosts());
        assertTrue(none.hierarchical());
        CommunicatorConfig emulated = CommunicatorConfig.fromEnvironment(Map.of("RANK", "0", "WORLD_SIZE", "6",
                "NETREDUCE_HOSTS", "3", "NETREDUCE_HIERARCHICAL", "off"));
        assertEquals(3, emulated.hosts());
        assertEquals(false, emulated.hierarchical());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CommunicatorConfig.fromEnvironment(Map.of("RANK", "0", "WORLD_SIZE", "6", "NETREDUCE_HOSTS", "4")));
        assertTrue(e.getMessage().contains("divide"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CommunicatorConfig.fromEnvironment(Map.of("RANK", "0",
                "WORLD_SIZE", "2", "NETREDUCE_HIERARCHICAL", "sometimes")));
        assertTrue(e.getMessage().contains("NETREDUCE_HIERARCHICAL"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CommunicatorConfig.fromEnvironment(Map.of("RANK", "0",
                "WORLD_SIZE", "4", "LOCAL_RANK", "2", "LOCAL_WORLD_SIZE", "2")));
        assertTrue(e.getMessage().contains("local rank"), e.getMessage());
    }

    @Test
    void badValuesAreRejectedSayingWhich() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CommunicatorConfig.fromEnvironment(Map.of("RANK", "x", "WORLD_SIZE", "2")));
        assertTrue(e.getMessage().contains("RANK"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> CommunicatorConfig.fromEnvironment(Map.of("RANK", "2", "WORLD_SIZE", "2")));
        assertTrue(e.getMessage().contains("outside world"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_MESSAGE_BYTES", "6")));
        assertTrue(e.getMessage().contains("multiple of 4"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_MTU", "1500")));
        assertTrue(e.getMessage().contains("MTU"), e.getMessage());
    }

    @Test
    void backendsAreFoundByNameThroughServiceLoader() {
        assertEquals("netreduce", Collectives.provider("NetReduce").name());
        assertEquals("ring", Collectives.provider("ring").name());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Collectives.provider("nccl"));
        assertTrue(e.getMessage().contains("netreduce") && e.getMessage().contains("ring"), e.getMessage());
        CommunicatorProvider ring = Collectives.provider("ring");
        try (Communicator c = ring.open(CommunicatorConfig.builder().build())) {
            assertEquals(1, c.size());
            assertEquals("ring", c.algorithm());
            FloatBuffer t = FloatBuffer.wrap(new float[] {1, 2, 3});
            c.allReduce(t, ReduceOp.AVG);
            assertEquals(2f, t.get(1));
        }
    }
}
