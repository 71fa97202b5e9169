package io.netreduce.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every way real RDMA can be missing produces a message saying what and how to fix it. */
class DisniAvailabilityTest {
    private static final UnsatisfiedLinkError NO_LIB =
            new UnsatisfiedLinkError("no disni in java.library.path: /usr/java/packages/lib:/usr/lib64");
    private static final UnsatisfiedLinkError NO_IBVERBS =
            new UnsatisfiedLinkError("/usr/local/lib/libdisni.so: libibverbs.so.1: cannot open shared object file");

    @Test
    void everythingPresentMeansAvailable() {
        assertNull(DisniAvailability.reason("true", true, null, "/usr/local/lib", List.of("mlx5_0"), true));
    }

    @Test
    void missingLibdisniSaysWhereItLookedAndHowToFix() {
        String r = DisniAvailability.reason("true", true, NO_LIB, "/usr/lib", List.of("mlx5_0"), true);
        assertTrue(r.contains("libdisni.so") && r.contains("java.library.path") && r.contains("[/usr/lib]")
                && r.contains("native/README.md"), r);
    }

    @Test
    void missingRdmaCoreLibrariesAreNamed() {
        String r = DisniAvailability.reason("true", true, NO_IBVERBS, "/usr/local/lib", List.of("mlx5_0"), true);
        assertTrue(r.contains("libibverbs.so.1") && r.contains("rdma-core"), r);
    }

    @Test
    void missingDeviceSaysHowToGetOne() {
        String none = DisniAvailability.reason("true", true, null, "", null, true);
        assertTrue(none.contains("no RDMA device") && none.contains("/sys/class/infiniband does not exist")
                && none.contains("rxe"), none);
        String empty = DisniAvailability.reason("true", true, null, "", List.of(), true);
        assertTrue(empty.contains("is empty"), empty);
    }

    @Test
    void missingJarExportAndExplicitDisableAreReported() {
        assertTrue(DisniAvailability.reason("true", false, null, "", List.of("x"), true).contains("DiSNI jar"));
        assertTrue(DisniAvailability.reason("true", true, null, "", List.of("x"), false)
                .contains("--add-exports java.base/sun.nio.ch=ALL-UNNAMED"));
        assertEquals("disabled by -Dnetreduce.disni.enabled=false",
                DisniAvailability.reason("false", true, null, "", List.of("x"), true));
    }

    @Test
    void devicesAreListedFromSysfs(@TempDir Path dir) throws Exception {
        assertNull(DisniAvailability.rdmaDevices(dir.resolve("absent")));
        assertEquals(List.of(), DisniAvailability.rdmaDevices(dir));
        Files.createDirectory(dir.resolve("rxe0"));
        assertEquals(List.of("rxe0"), DisniAvailability.rdmaDevices(dir));
    }
}
