package io.netreduce.cli.allreduce;

import java.util.List;

/**
 * What every rank runs, identically: the algorithms, sizes (bytes, multiples of 4), the
 * least timed and warm-up iterations per size, the least time to spend timing each size
 * (more iterations where calls are fast; 0 for exactly {@code iterations}), the seconds of
 * untimed calls before the first size (so that the JIT compiler has compiled the hot
 * paths), whether to check results, which placements to time, and how long each rank
 * sleeps before each timed call (outside the clock, as a training loop computes between
 * all-reduces; a pause times exactly {@code iterations} calls). Rank 0's clock decides the
 * time-based counts.
 */
public record Workload(List<String> algorithms, List<Long> sizes, int iterations, int warmup,
                       double secondsPerSize, double warmupSeconds, boolean check, boolean outOfPlace,
                       boolean inPlace, int pauseMillis) {
    public Workload {
        if (sizes.isEmpty() || algorithms.isEmpty()) {
            throw new IllegalArgumentException("need at least one size and one algorithm");
        }
        for (long s : sizes) {
            if (s <= 0 || s % 4 != 0) {
                throw new IllegalArgumentException("sizes must be positive multiples of 4 bytes (float32): " + s);
            }
            if (s > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("size too large for one tensor: " + s);
            }
        }
        if (iterations < 1 || warmup < 0) {
            throw new IllegalArgumentException("iterations must be at least 1 and warm-up not negative");
        }
        // Named as the commands name them (bench, demo and the workers take the same options).
        if (!(warmupSeconds >= 0)) {
            throw new IllegalArgumentException("--warmup-seconds must not be negative: " + warmupSeconds);
        }
        if (!(secondsPerSize >= 0)) {
            throw new IllegalArgumentException("--seconds-per-size must not be negative: " + secondsPerSize);
        }
        if (pauseMillis < 0) {
            throw new IllegalArgumentException("--pause-ms must not be negative: " + pauseMillis);
        }
        if (!outOfPlace && !inPlace) {
            throw new IllegalArgumentException("time at least one placement");
        }
    }

    /** Whether each size times exactly {@link #iterations} calls (no time-based count). */
    public boolean exactCounts() {
        return secondsPerSize <= 0 || pauseMillis > 0;
    }

    /** The help text of the commands' {@code --seconds-per-size} (bench and demo). */
    public static final String SECONDS_PER_SIZE_HELP = "Time each size for at least this long: more than -n "
            + "iterations where calls are fast, with a quarter of that warming up (0 for exactly -n and -w). "
            + "Default ${DEFAULT-VALUE}.";

    /** The help text of the commands' {@code --warmup-seconds} (bench and demo; each has its own default). */
    public static final String WARMUP_SECONDS_HELP = "Least seconds of untimed all-reduces over every size before "
            + "the first, so that the JVM has compiled the hot paths: longer while any rank's JIT is still busy, up to "
            + "5 times this, and times ranks/cores where more local ranks than cores share their compilers' cores "
            + "(0 to time a cold JVM). Default ${DEFAULT-VALUE}.";

    /**
     * The warm-up for {@code localRanks} rank processes on this machine: {@code asked} times
     * ranks/cores where they outnumber the cores, since each rank's JIT compiler then gets
     * that much less of a core (measured, 4 ranks on 2 cores, 64 KiB over tcp as the first
     * size: given 3 s, it took 1.1-3.4x its time after a 10 s warm-up).
     */
    public static double localWarmupSeconds(double asked, int localRanks) {
        // A bad value passes through unscaled, so that the refusal quotes what the user gave.
        double perCore = (double) localRanks / Runtime.getRuntime().availableProcessors();
        return asked > 0 ? asked * Math.max(1.0, perCore) : asked;
    }

    public long maxSize() {
        return sizes.stream().mapToLong(Long::longValue).max().orElseThrow();
    }

    /** Rows each algorithm produces. */
    public int rowsPerAlgorithm() {
        return sizes.size() * ((outOfPlace ? 1 : 0) + (inPlace ? 1 : 0));
    }
}
