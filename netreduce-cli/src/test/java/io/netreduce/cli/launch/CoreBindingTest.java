package io.netreduce.cli.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netreduce.verbs.support.HostCores;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class CoreBindingTest {
    @Test
    void moreRanksThanCpusAreNotBound() {
        int cpus = HostCores.allowedCpus().size();
        CoreBinding b = CoreBinding.forRanks(cpus + 1);
        assertEquals(List.of(), b.prefix(0));
        assertEquals("", b.describe());
    }

    /** The prefix really runs a process on its rank's CPU: the process reads its own allowed list. */
    @Test
    void eachRankRunsOnACpuOfItsOwn() throws Exception {
        List<Integer> cpus = HostCores.allowedCpus();
        assumeTrue(cpus.size() >= 2, "needs two CPUs, has " + cpus);
        CoreBinding b = CoreBinding.forRanks(2);
        assumeTrue(!b.prefix(0).isEmpty(), "taskset is not installed here");
        for (int rank = 0; rank < 2; rank++) {
            assertEquals("Cpus_allowed_list:\t" + cpus.get(rank), allowedListOf(b.prefix(rank)), "rank " + rank);
        }
    }

    private static String allowedListOf(List<String> prefix) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(List.of("grep", "Cpus_allowed_list", "/proc/self/status"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
        }
        return out;
    }
}
