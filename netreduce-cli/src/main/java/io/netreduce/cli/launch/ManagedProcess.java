package io.netreduce.cli.launch;

import io.netreduce.cli.CliException;
import io.netreduce.collectives.RankJvmOptions;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One child process with its output pumped by daemon threads: each stdout line goes to a
 * consumer (e.g. a parser of result lines), each stderr line to our stderr prefixed with
 * the child's name. The last stderr lines are kept so that a failure can say why. The
 * JVM's notice that it uses the incubator module {@link JvmCommand} asked for is dropped.
 */
public final class ManagedProcess {
    private static final Logger LOG = LoggerFactory.getLogger(ManagedProcess.class);
    private static final int KEPT_ERROR_LINES = 20;
    /** How long a child gets to exit after SIGTERM before it is killed. */
    static final Duration GRACE = Duration.ofSeconds(3);

    private final String name;
    private final Process process;
    private final Deque<String> lastErrorLines = new ArrayDeque<>();
    private final Thread stdoutPump;
    private final Thread stderrPump;

    private ManagedProcess(String name, Process process, Consumer<String> stdoutLines, PrintStream stderr,
                           boolean prefixStderr) {
        this.name = name;
        this.process = process;
        this.stdoutPump = pump(process.getInputStream(), name + "-out", stdoutLines);
        this.stderrPump = pump(process.getErrorStream(), name + "-err", line -> {
            if (RankJvmOptions.isStartupNotice(line)) {
                return; // the JVM's notice for the module JvmCommand added, on every start
            }
            synchronized (lastErrorLines) {
                if (lastErrorLines.size() == KEPT_ERROR_LINES) {
                    lastErrorLines.removeFirst();
                }
                lastErrorLines.addLast(line);
            }
            if (stderr != null) {
                stderr.println(prefixStderr ? "[" + name + "] " + line : line);
            }
        });
    }

    /**
     * Starts {@code command}. Stdout lines go to {@code stdoutLines}; stderr lines are
     * copied to {@code stderr} (null to only keep them for error messages).
     */
    public static ManagedProcess start(JvmCommand command, Consumer<String> stdoutLines, PrintStream stderr) {
        ProcessBuilder pb = new ProcessBuilder(command.commandLine());
        pb.environment().putAll(command.environment());
        pb.environment().put(JvmCommand.ENV_EXIT_WITH_PARENT, "1");
        // stdin stays a pipe that we never write: the child sees EOF when we die.
        pb.redirectInput(ProcessBuilder.Redirect.PIPE);
        LOG.debug("starting {}", command);
        try {
            return new ManagedProcess(command.name(), pb.start(), stdoutLines, stderr, true);
        } catch (IOException e) {
            throw new CliException("cannot start " + command.name() + ": " + e.getMessage(), e);
        }
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public ProcessHandle handle() {
        return process.toHandle();
    }

    /** Exit code if the child has exited. */
    public Optional<Integer> exitCode() {
        return process.isAlive() ? Optional.empty() : Optional.of(process.exitValue());
    }

    /** Waits at most {@code timeout} for the child to exit; returns its exit code or throws. */
    public int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new CliException(name + " did not finish within " + timeout.toSeconds() + " s");
        }
        drainOutput();
        return process.exitValue();
    }

    /** Waits (bounded) for the pump threads so that every line the child wrote has been handled. */
    void drainOutput() throws InterruptedException {
        stdoutPump.join(GRACE.toMillis());
        stderrPump.join(GRACE.toMillis());
    }

    /** The child's last stderr lines, oldest first, for error messages. */
    public String lastErrorLine() {
        synchronized (lastErrorLines) {
            // A stack trace's first line says more than its last "at ..." frame.
            for (String line : lastErrorLines) {
                if (!line.isBlank() && !line.startsWith("\tat ") && !line.startsWith("Caused by")) {
                    String last = lastErrorLines.peekLast();
                    return last != null && last.startsWith("\tat ") ? line : last;
                }
            }
            return lastErrorLines.isEmpty() ? "" : lastErrorLines.peekLast();
        }
    }

    /**
     * Stops the child and everything it started: SIGTERM, a grace period, then SIGKILL.
     * Bounded; safe to call twice and from a shutdown hook.
     */
    public void destroy() {
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        try {
            if (!process.waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.debug("{} ignored SIGTERM; killing it", name);
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                process.waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static Thread pump(InputStream in, String threadName, Consumer<String> lines) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.accept(line);
                }
            } catch (IOException e) {
                LOG.debug("{}: output closed: {}", threadName, e.getMessage());
            }
        }, threadName);
        t.setDaemon(true);
        t.start();
        return t;
    }
}
