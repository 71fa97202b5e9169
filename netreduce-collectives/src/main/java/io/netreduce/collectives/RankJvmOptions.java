package io.netreduce.collectives;

import java.lang.module.ModuleFinder;
import java.util.List;

/**
 * JVM options for processes that run ranks, for launchers that start them (the
 * {@code netreduce} command, a training script's own launcher): with them the ring sums
 * with the Vector API, about twice as fast as without (see the user guide, "JVM options").
 *
 * <pre>{@code
 * List<String> cmd = new ArrayList<>(List.of(java, "-cp", classPath));
 * cmd.addAll(1, RankJvmOptions.recommended());
 * }</pre>
 */
public final class RankJvmOptions {
    /** The Vector API, an incubator module in Java 17. */
    public static final String VECTOR_MODULE = "jdk.incubator.vector";
    private static final String STARTUP_NOTICE = "WARNING: Using incubator modules: " + VECTOR_MODULE;
    private static final List<String> RECOMMENDED = ModuleFinder.ofSystem().find(VECTOR_MODULE).isPresent()
            ? List.of("--add-modules=" + VECTOR_MODULE) : List.of();

    private RankJvmOptions() {
    }

    /**
     * The options to give a rank JVM started with this runtime's {@code java}: the Vector
     * API module where this runtime has it (a jlinked image may not), else none.
     */
    public static List<String> recommended() {
        return RECOMMENDED;
    }

    /**
     * True for the line a JVM started with {@link #recommended()} prints on stderr at every
     * start (that it uses an incubator module): expected, so a launcher may drop it.
     */
    public static boolean isStartupNotice(String stderrLine) {
        return STARTUP_NOTICE.equals(stderrLine);
    }
}
