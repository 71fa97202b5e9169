package io.netreduce.verbs.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netreduce.verbs.DeviceOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class HostCoresTest {
    @Test
    void aKernelCpuListNamesEveryCpuInItsRanges() {
        assertEquals(List.of(0, 1, 2, 3, 8, 10, 11), HostCores.parseCpuList("0-3,8,10-11"));
        assertEquals(List.of(5), HostCores.parseCpuList("5"));
        assertEquals(List.of(), HostCores.parseCpuList(""));
    }

    @Test
    void aProcessBoundInsideItsCpusetCountsTheCpusetAndAQuotaStands() {
        // bound by a launcher to one of the cpuset's two CPUs: the host has two
        assertEquals(2, HostCores.count(1, List.of(1), List.of(0, 1), List.of(0, 1)));
        // the same where the parent cannot be read
        assertEquals(2, HostCores.count(1, List.of(1), List.of(), List.of(0, 1)));
        // the whole group pinned to one CPU (the parent has it too): one
        assertEquals(1, HostCores.count(1, List.of(1), List.of(1), List.of(0, 1)));
        // not bound: the JVM's count
        assertEquals(2, HostCores.count(2, List.of(0, 1), List.of(0, 1), List.of(0, 1)));
        // a CPU quota of one below an affinity of two: the quota
        assertEquals(1, HostCores.count(1, List.of(0, 1), List.of(0, 1), List.of(0, 1, 2, 3)));
        // the cpuset unknown
        assertEquals(1, HostCores.count(1, List.of(0), List.of(0, 1), List.of()));
    }

    /**
     * A JVM that taskset binds to one CPU counts one (its availableProcessors) but the host's
     * cores through HostCores, and two pollers of the host do not oversubscribe them; a JVM
     * whose parent (a shell standing for a launcher) was pinned to that CPU with it, as a
     * whole group pinned by hand, counts one, and two pollers do.
     */
    @Test
    void aJvmBoundToOneCpuSeesTheHostsCoresUnlessItsParentWasPinnedWithIt() throws Exception {
        List<Integer> cpus = HostCores.allowedCpus();
        int host = HostCores.count();
        assumeTrue(cpus.size() >= 2 && host >= 2, "needs two CPUs, has " + cpus);
        assumeTrue(onPath("taskset") && onPath("sh"), "taskset (util-linux) or sh is not installed");
        String cpu = String.valueOf(cpus.get(1));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> probe = List.of(java, "-cp", System.getProperty("java.class.path"), Probe.class.getName());
        List<String> alone = new ArrayList<>(List.of("taskset", "--cpu-list", cpu));
        alone.addAll(probe);
        String out = run(alone);
        assertEquals("jvm=1 host=" + host + " oversubscribed=false", lastLine(out), out);
        // sh keeps running while its child does ("; exit"), so the child's parent is the pinned shell
        List<String> group = List.of("taskset", "--cpu-list", cpu, "sh", "-c", "\"$@\"; exit $?", "sh");
        List<String> pinned = new ArrayList<>(group);
        pinned.addAll(probe);
        out = run(pinned);
        assertEquals("jvm=1 host=1 oversubscribed=true", lastLine(out), out);
    }

    private static String run(List<String> cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            assertEquals(true, p.waitFor(60, TimeUnit.SECONDS), "the probe did not finish: " + out);
            return out;
        } finally {
            p.destroyForcibly();
        }
    }

    private static String lastLine(String out) {
        return out.lines().reduce((a, b) -> b).orElse("");
    }

    private static boolean onPath(String program) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, program))) {
                return true;
            }
        }
        return false;
    }

    /** Prints what a bound process counts. */
    public static final class Probe {
        public static void main(String[] args) {
            DeviceOptions twoPollers = DeviceOptions.builder().hostPollers(2).build();
            System.out.println("jvm=" + Runtime.getRuntime().availableProcessors() + " host=" + HostCores.count()
                    + " oversubscribed=" + twoPollers.coresOversubscribed());
        }
    }
}
