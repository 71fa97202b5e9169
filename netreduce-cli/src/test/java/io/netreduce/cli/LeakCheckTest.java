package io.netreduce.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The leak check the CLI tests rely on does see a live process carrying the marker. */
@Timeout(30)
class LeakCheckTest {
    @Test
    void findsALiveMarkedProcessAndNotADeadOne() throws Exception {
        String marker = "netreduce-leak-check-" + UUID.randomUUID();
        Process p = new ProcessBuilder("sh", "-c", "sleep 20; : " + marker).start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (CliRun.processesWith(marker).isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(1, CliRun.processesWith(marker).size());
            assertThrows(AssertionError.class, () -> CliRun.assertNothingLeftBehind(marker));
        } finally {
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
        }
        CliRun.assertNothingLeftBehind(marker);
    }
}
