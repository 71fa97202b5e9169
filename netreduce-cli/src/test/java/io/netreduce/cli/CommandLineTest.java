package io.netreduce.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The command's surface, run as a real process: help, version, and one-line errors. */
@Timeout(120)
class CommandLineTest {
    private static final Duration T = Duration.ofSeconds(30);

    @Test
    void everyCommandHasHelpWithExamples() {
        for (List<String> cmd : List.<List<String>>of(List.of(), List.of("demo"), List.of("bench"), List.of("switch"),
                List.of("probe"), List.of("probe", "bw"), List.of("probe", "rtt"), List.of("simulate"))) {
            String[] args = concat(cmd, "--help");
            CliRun run = CliRun.run(T, args);
            run.assertExit(ExitCode.OK);
            assertTrue(run.stdout.startsWith("Usage: netreduce"), run.describe());
            assertTrue(run.stdout.contains("Examples:"), "no examples in help of " + cmd + ":\n" + run.stdout);
            // picocli warns (on the help text itself) about a '%' it cannot format
            assertFalse(run.stdout.contains("picocli WARN") || run.stderr.contains("picocli WARN"), run.describe());
        }
    }

    @Test
    void versionNamesTheProject() {
        CliRun run = CliRun.run(T, "--version");
        run.assertExit(ExitCode.OK);
        assertTrue(run.stdout.matches("(?s)netreduce \\d+\\.\\d+\\.\\d+.*"), run.describe());
    }

    @Test
    void unknownFlagIsOneLineAndExitCode2() {
        CliRun run = CliRun.run(T, "probe", "bw", "--no-such-flag");
        run.assertExit(ExitCode.USAGE);
        assertEquals(1, run.stderr.lines().count(), run.describe());
        assertTrue(run.stderr.contains("--no-such-flag"), run.describe());
        assertTrue(run.stdout.isEmpty(), run.describe());
    }

    @Test
    void badValueNamesTheOption() {
        CliRun run = CliRun.run(T, "probe", "rtt", "--local", "--size", "12Q");
        run.assertExit(ExitCode.USAGE);
        assertEquals(1, run.stderr.lines().count(), run.describe());
        assertTrue(run.stderr.contains("--size") && run.stderr.contains("12Q"), run.describe());
    }

    @Test
    void unreachableServerIsOneLineWithoutStackTrace() throws Exception {
        int port = io.netreduce.cli.allreduce.LocalCluster.freeLoopbackPort();
        CliRun run = CliRun.run(T, "probe", "bw", "127.0.0.1:" + port, "--timeout", "5");
        run.assertExit(ExitCode.FAILED);
        assertEquals(1, run.stderr.lines().count(), run.describe());
        assertTrue(run.stderr.contains("cannot reach") && run.stderr.contains(String.valueOf(port)), run.describe());
        assertFalse(run.stderr.contains("\tat "), run.describe());
    }

    @Test
    void verboseShowsTheStackTrace() {
        int port = io.netreduce.cli.allreduce.LocalCluster.freeLoopbackPort();
        CliRun run = CliRun.run(T, "probe", "bw", "127.0.0.1:" + port, "--timeout", "5", "--verbose");
        run.assertExit(ExitCode.FAILED);
        assertTrue(run.stderr.contains("\tat "), run.describe());
    }

    private static String[] concat(List<String> a, String b) {
        String[] r = a.toArray(new String[a.size() + 1]);
        r[a.size()] = b;
        return r;
    }
}
