package io.netreduce.cli.launch;

import io.netreduce.verbs.support.HostCores;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which core each local rank process runs on: rank r on the r-th CPU this process may use,
 * where there are at least as many as ranks, as {@code mpirun} binds to cores by default at
 * two ranks; otherwise, or where {@code taskset} is missing, the scheduler places them. Two
 * communicating ranks left to the scheduler were seen stacked on one core for 10 ms and
 * more while the other idled (a wake-up pulls the woken rank onto the waker's core): over
 * tcp at P = 2, bound ranks ran 0.99-1.10x the busbw at 256 KiB-64 MiB for 0.89-0.99x the
 * CPU (docs/benchmarks.md, "Binding ranks to cores").
 */
public final class CoreBinding {
    private static final Logger LOG = LoggerFactory.getLogger(CoreBinding.class);
    private static final String TASKSET = "taskset";

    /** The CPUs a rank is bound to, by rank; empty: none bound. */
    private final List<Integer> cpus;

    private CoreBinding(List<Integer> cpus) {
        this.cpus = cpus;
    }

    /** Binds nothing. */
    public static CoreBinding none() {
        return new CoreBinding(List.of());
    }

    /** One core per rank for {@code ranks} ranks where this machine allows it; logs which. */
    public static CoreBinding forRanks(int ranks) {
        List<Integer> allowed = HostCores.allowedCpus();
        if (ranks > allowed.size()) {
            LOG.info("{} ranks on {} CPUs: not bound to cores", ranks, allowed.size());
            return none();
        }
        if (findOnPath(TASKSET) == null) {
            LOG.info("{} not found on PATH: ranks not bound to cores (install util-linux to bind them)", TASKSET);
            return none();
        }
        LOG.info("ranks bound to CPUs {} (--bind none leaves them to the scheduler)", allowed.subList(0, ranks));
        return new CoreBinding(List.copyOf(allowed.subList(0, ranks)));
    }

    /** The CPUs of ranks 0, 1, ... as "0,1", or "none", for a benchmark's report. */
    public String cpus() {
        return cpus.isEmpty() ? "none" : String.join(",", cpus.stream().map(String::valueOf).toList());
    }

    /** ", bound to CPUs 0,1" or "", for a launcher's progress note. */
    public String describe() {
        return cpus.isEmpty() ? "" : ", bound to CPUs " + cpus();
    }

    /** The command prefix that runs rank {@code rank} on its core, or nothing. */
    public List<String> prefix(int rank) {
        return rank < cpus.size() ? List.of(TASKSET, "--cpu-list", String.valueOf(cpus.get(rank))) : List.of();
    }

    private static Path findOnPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(File.pathSeparator)) {
            Path p = Path.of(dir, program);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }
}
