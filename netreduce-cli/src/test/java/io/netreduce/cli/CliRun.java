package io.netreduce.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Runs the real netreduce command in a fresh JVM (same class path as the tests), with a
 * deadline, capturing stdout and stderr. Every JVM it starts, and every child those start
 * (through NETREDUCE_CHILD_JAVA_OPTS), carries a unique marker on its command line, so
 * {@link #assertNothingLeftBehind()} can prove the command cleaned up after itself.
 */
public final class CliRun {
    public final int exitCode;
    public final String stdout;
    public final String stderr;
    public final String marker;
    public final Duration elapsed;

    private CliRun(int exitCode, String stdout, String stderr, String marker, Duration elapsed) {
        this.exitCode = exitCode;
        this.stdout = stdout;
        this.stderr = stderr;
        this.marker = marker;
        this.elapsed = elapsed;
    }

    public static CliRun run(Duration timeout, String... args) {
        return start(args).await(timeout);
    }

    /** Starts the command without waiting, e.g. to interrupt it. */
    public static Running start(String... args) {
        String marker = "-Dnetreduce.test.marker=" + UUID.randomUUID();
        List<String> cmd = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", marker,
                "-cp", System.getProperty("java.class.path"), "io.netreduce.cli.NetreduceCli"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("NETREDUCE_CHILD_JAVA_OPTS", marker);
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            return new Running(p, marker, String.join(" ", args));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A command started by {@link #start}. */
    public static final class Running {
        public final Process process;
        public final String marker;
        private final String args;
        private final long start = System.nanoTime();
        private final Capture out;
        private final Capture err;

        Running(Process process, String marker, String args) {
            this.process = process;
            this.marker = marker;
            this.args = args;
            this.out = new Capture(process.getInputStream());
            this.err = new Capture(process.getErrorStream());
        }

        /** Processes of this run still alive: the command and its children. */
        public List<String> processes() {
            return processesWith(marker);
        }

        public String stderrSoFar() {
            return err.text();
        }

        /** Sends SIGINT, as Ctrl-C does. */
        public void interrupt() throws IOException, InterruptedException {
            new ProcessBuilder("kill", "-INT", String.valueOf(process.pid())).start().waitFor(5, TimeUnit.SECONDS);
        }

        public CliRun await(Duration timeout) {
            try {
                if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.descendants().forEach(ProcessHandle::destroyForcibly);
                    process.destroyForcibly();
                    process.waitFor(5, TimeUnit.SECONDS);
                    fail("netreduce " + args + " did not finish within " + timeout.toSeconds()
                            + " s; stderr so far:\n" + err.text());
                }
                out.joinQuietly();
                err.joinQuietly();
                return new CliRun(process.exitValue(), out.text(), err.text(), marker,
                        Duration.ofNanos(System.nanoTime() - start));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /** Fails if any process started by this run (the command or its children) still exists. */
    public void assertNothingLeftBehind() throws InterruptedException {
        assertNothingLeftBehind(marker);
    }

    /** Processes whose command line contains {@code marker}. */
    static List<String> processesWith(String marker) {
        return ProcessHandle.allProcesses()
                .filter(h -> h.info().commandLine().or(() -> h.info().arguments().map(a -> String.join(" ", a)))
                        .map(c -> c.contains(marker)).orElse(false))
                .map(h -> h.pid() + " " + h.info().commandLine().orElse("?"))
                .toList();
    }

    static void assertNothingLeftBehind(String marker) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        List<String> left;
        do {
            left = processesWith(marker);
            if (left.isEmpty()) {
                return;
            }
            Thread.sleep(100);
        } while (System.nanoTime() < deadline);
        fail("processes left behind by the command: " + left);
    }

    public String describe() {
        return "exit " + exitCode + "\n--- stdout\n" + stdout + "--- stderr\n" + stderr;
    }

    public void assertExit(int expected) {
        assertTrue(exitCode == expected, "expected exit " + expected + ", got " + describe());
    }

    public Optional<String> stderrLineContaining(String text) {
        return stderr.lines().filter(l -> l.contains(text)).findFirst();
    }

    private static final class Capture extends Thread {
        private final InputStream in;
        private final ByteArrayOutputStream buf = new ByteArrayOutputStream();

        Capture(InputStream in) {
            this.in = in;
            setDaemon(true);
            start();
        }

        @Override
        public void run() {
            try {
                in.transferTo(buf);
            } catch (IOException ignored) {
                // Process gone; keep what we have.
            }
        }

        String text() {
            synchronized (buf) {
                return buf.toString(StandardCharsets.UTF_8);
            }
        }

        void joinQuietly() throws InterruptedException {
            join(5000);
        }
    }
}
