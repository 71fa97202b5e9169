package io.netreduce.verbs.support;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cores this host's ranks share, for deciding whether its pollers outnumber them. That
 * is not {@link Runtime#availableProcessors()} where a launcher bound each rank to a core of
 * its own (netreduce's {@code --local}, mpirun at two ranks, taskset): the JVM counts the one
 * core its affinity allows, and a rank that then took its host's other ranks for rivals on
 * that core yielded it on every turn of its spin, a system call per turn on a core no one
 * else wanted. So where the JVM's count is this process's affinity, narrower than its
 * parent's (a binder pinned this rank, not the whole group: {@code taskset -c 0} around a
 * launcher leaves every rank its parent's one core, and that count stands), and the cpuset
 * its cgroup gives (cgroup v2 or v1; else the CPUs online) holds more, the cpuset's count is
 * the host's: a binder that pins ranks inside it gives each its own cores where it can. A
 * CPU quota below the affinity (a container's {@code --cpus}) is what the JVM counts, and
 * that count stands too.
 */
public final class HostCores {
    private static final Logger LOG = LoggerFactory.getLogger(HostCores.class);
    private static final Path STATUS = Path.of("/proc/self/status");
    private static final Path CGROUP = Path.of("/proc/self/cgroup");
    private static final Path ONLINE = Path.of("/sys/devices/system/cpu/online");
    private static final Path CGROUP_V2 = Path.of("/sys/fs/cgroup");
    private static final Path CGROUP_V1_CPUSET = Path.of("/sys/fs/cgroup/cpuset");
    private static final String V2_CPUS = "cpuset.cpus.effective";
    private static final String V1_CPUS = "cpuset.effective_cpus";

    private static volatile int cached;

    private HostCores() {
    }

    /** The cores this host's ranks share (at least the JVM's count); read once. */
    public static int count() {
        int n = cached;
        if (n == 0) {
            List<Integer> parent = ProcessHandle.current().parent()
                    .map(p -> allowedCpus(Path.of("/proc", Long.toString(p.pid()), "status"))).orElse(List.of());
            n = count(Runtime.getRuntime().availableProcessors(), allowedCpus(), parent, cpusetCpus());
            cached = n;
        }
        return n;
    }

    /**
     * The rule, over what was read: {@code jvm} the JVM's count, {@code affinity} the CPUs this
     * process may run on, {@code parent} its parent's, {@code cpuset} its cgroup's (the last
     * two empty where unknown: an unknown parent is taken for one that did not pin this process).
     */
    static int count(int jvm, List<Integer> affinity, List<Integer> parent, List<Integer> cpuset) {
        boolean pinnedAlone = parent.isEmpty() || parent.size() > affinity.size();
        return affinity.size() == jvm && pinnedAlone && cpuset.size() > jvm ? cpuset.size() : jvm;
    }

    /**
     * The CPUs this process may run on ({@code Cpus_allowed_list}: its affinity within its
     * cpuset), in order, or 0..n-1 for the JVM's count where that cannot be read.
     */
    public static List<Integer> allowedCpus() {
        List<Integer> cpus = allowedCpus(STATUS);
        if (!cpus.isEmpty()) {
            return cpus;
        }
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
            all.add(i);
        }
        return all;
    }

    /** The {@code Cpus_allowed_list} of a process's {@code status} file, empty where it cannot be read. */
    private static List<Integer> allowedCpus(Path status) {
        try {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return parseCpuList(line.substring(line.indexOf(':') + 1).trim());
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("cannot read the CPUs in {}: {}", status, e.toString());
        }
        return List.of();
    }

    /** The CPUs of this process's cpuset: its cgroup's (v2, then v1), else those online; empty if none can be read. */
    static List<Integer> cpusetCpus() {
        List<Path> candidates = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(CGROUP)) {
                // "0::/path" (v2) or "N:cpuset[,...]:/path" (v1); the path is relative to the mount.
                String[] f = line.split(":", 3);
                if (f.length == 3 && f[1].isEmpty()) {
                    candidates.add(CGROUP_V2.resolve(f[2].substring(1)).resolve(V2_CPUS));
                } else if (f.length == 3 && List.of(f[1].split(",")).contains("cpuset")) {
                    candidates.add(CGROUP_V1_CPUSET.resolve(f[2].substring(1)).resolve(V1_CPUS));
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("cannot read this process's cgroups: {}", e.toString());
        }
        // A container without its own cgroup namespace sees its cgroup at the mount's root.
        candidates.add(CGROUP_V2.resolve(V2_CPUS));
        candidates.add(CGROUP_V1_CPUSET.resolve(V1_CPUS));
        candidates.add(ONLINE);
        for (Path p : candidates) {
            try {
                List<Integer> cpus = parseCpuList(Files.readString(p).trim());
                if (!cpus.isEmpty()) {
                    return cpus;
                }
            } catch (IOException | RuntimeException e) {
                // not this one: try the next
            }
        }
        return List.of();
    }

    /** A kernel CPU list ("0-3,8,10-11") as the CPUs in it, in order. */
    public static List<Integer> parseCpuList(String list) {
        List<Integer> cpus = new ArrayList<>();
        for (String part : list.split(",")) {
            if (part.isBlank()) {
                continue;
            }
            int dash = part.indexOf('-');
            int first = Integer.parseInt(part.substring(0, dash < 0 ? part.length() : dash).trim());
            int last = dash < 0 ? first : Integer.parseInt(part.substring(dash + 1).trim());
            for (int c = first; c <= last; c++) {
                cpus.add(c);
            }
        }
        return cpus;
    }
}
