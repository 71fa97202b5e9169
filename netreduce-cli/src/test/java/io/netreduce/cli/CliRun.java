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
        String marker = "-Dnetreduce.test.marker=" + UUID.randomUUID();
        List<String> cmd = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", marker,
                "-cp", System.getProperty("java.class.path"), "io.netreduce.cli.NetreduceCli"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("NETREDUCE_CHILD_JAVA_OPTS", marker);
        long start = System.nanoTime();
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            Capture out = new Capture(p.getInputStream());
            Capture err = new Capture(p.getErrorStream());
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor(5, TimeUnit.SECONDS);
                fail("netreduce " + String.join(" ", args) + " did not finish within " + timeout.toSeconds()
                        + " s; stderr so far:\n" + err.text());
            }
            out.joinQuietly();
            err.joinQuietly();
            return new CliRun(p.exitValue(), out.text(), err.text(), marker, Duration.ofNanos(System.nanoTime() - start));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
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
