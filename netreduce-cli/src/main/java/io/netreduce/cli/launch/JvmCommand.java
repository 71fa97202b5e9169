package io.netreduce.cli.launch;

import io.netreduce.collectives.RankJvmOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The command line of a child JVM that runs {@code netreduce} again (a worker, a probe
 * server): same java executable, same class path, so that a child always runs exactly the
 * code of its parent, whether that is the packaged jar or a test class path.
 */
public final class JvmCommand {
    /** The main class children run. */
    public static final String MAIN_CLASS = "io.netreduce.cli.NetreduceCli";
    /**
     * Set in every child's environment: tells the child to exit when its parent's pipe
     * to it closes, so that a parent killed with SIGKILL leaves no orphans behind.
     */
    public static final String ENV_EXIT_WITH_PARENT = "NETREDUCE_EXIT_WITH_PARENT";

    private final String name;
    /** What runs the JVM (a core binding's {@code taskset}), or nothing. */
    private final List<String> launcher = new ArrayList<>();
    private final List<String> jvmOptions = new ArrayList<>();
    private final List<String> arguments = new ArrayList<>();
    private final Map<String, String> environment = new LinkedHashMap<>();

    private JvmCommand(String name) {
        this.name = Objects.requireNonNull(name);
    }

    /** A child called {@code name} in messages and output prefixes (e.g. "rank 2"). */
    public static JvmCommand named(String name) {
        return new JvmCommand(name);
    }

    public String name() {
        return name;
    }

    /** Runs the JVM through {@code command} (e.g. {@code taskset --cpu-list 1}). */
    public JvmCommand launcher(List<String> command) {
        launcher.addAll(command);
        return this;
    }

    public JvmCommand jvmOption(String option) {
        jvmOptions.add(option);
        return this;
    }

    public JvmCommand args(String... args) {
        arguments.addAll(List.of(args));
        return this;
    }

    public JvmCommand args(List<String> args) {
        arguments.addAll(args);
        return this;
    }

    public JvmCommand env(String key, String value) {
        environment.put(key, value);
        return this;
    }

    public Map<String, String> environment() {
        return environment;
    }

    /** The full command: its launcher if any, java, JVM options, class path, main class, arguments. */
    public List<String> commandLine() {
        List<String> cmd = new ArrayList<>(launcher);
        cmd.add(javaExecutable());
        cmd.addAll(defaultJvmOptions());
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(MAIN_CLASS);
        cmd.addAll(arguments);
        return cmd;
    }

    private static String javaExecutable() {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        return Files.isExecutable(java) ? java.toString() : "java";
    }

    /**
     * Options every child gets: a parallel collector (few, short pauses on small heaps),
     * room for direct buffers, {@link RankJvmOptions#recommended()} (the Vector API where
     * there is one), and whatever the user put in NETREDUCE_CHILD_JAVA_OPTS.
     */
    private static List<String> defaultJvmOptions() {
        List<String> opts = new ArrayList<>(List.of("-XX:+UseParallelGC", "-XX:MaxDirectMemorySize=4g"));
        opts.addAll(RankJvmOptions.recommended());
        String extra = System.getenv("NETREDUCE_CHILD_JAVA_OPTS");
        if (extra != null && !extra.isBlank()) {
            opts.addAll(List.of(extra.trim().split("\\s+")));
        }
        return opts;
    }

    @Override
    public String toString() {
        return name + ": " + String.join(" ", commandLine());
    }
}
