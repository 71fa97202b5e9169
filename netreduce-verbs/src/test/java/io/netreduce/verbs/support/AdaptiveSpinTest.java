package io.netreduce.verbs.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class AdaptiveSpinTest {
    /** The ring as the soft provider uses it (the class is abstract only so providers can tell their queues apart). */
    private static final class Ring extends CompletionRing {
        Ring(AdaptiveSpin spin) {
            super(8, spin);
        }
    }

    @Test
    void spinHalvesAfterLongWaitsAndComesBackAfterShortOnes() {
        AdaptiveSpin spin = new AdaptiveSpin(100_000, false);
        assertEquals(100_000, spin.budgetNanos());
        spin.adapt(150_000); // within twice the spin: it might have caught it
        assertEquals(100_000, spin.budgetNanos());
        long expected = 100_000;
        for (int i = 0; i < 10; i++) {
            spin.adapt(5_000_000);
            expected = Math.max(AdaptiveSpin.MIN_SPIN_NANOS, expected / 2);
            assertEquals(expected, spin.budgetNanos(), "after " + (i + 1) + " waits of 5 ms");
        }
        assertEquals(AdaptiveSpin.MIN_SPIN_NANOS, spin.budgetNanos());
        spin.adapt(1_000);
        assertEquals(100_000, spin.budgetNanos());
        assertEquals(0, new AdaptiveSpin(0, true).budgetNanos(), "a spin of 0 sleeps at once");
    }

    @Test
    void aSpinningPollSeesACompletionPushedByAnotherThread() throws Exception {
        for (boolean yield : new boolean[] {false, true}) {
            Ring ring = new Ring(new AdaptiveSpin(Duration.ofSeconds(5).toNanos(), yield));
            WorkCompletion[] out = {new WorkCompletion()};
            CountDownLatch polling = new CountDownLatch(1);
            Thread pusher = new Thread(() -> {
                try {
                    polling.await();
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
                ring.push(7, WcStatus.SUCCESS, WcOpcode.RECV, 64, false, 0, 1, null);
            });
            pusher.start();
            polling.countDown();
            long t0 = System.nanoTime();
            int n = ring.poll(out, Duration.ofSeconds(10));
            long waited = System.nanoTime() - t0;
            pusher.join();
            assertEquals(1, n);
            assertEquals(7, out[0].wrId());
            assertTrue(waited < Duration.ofSeconds(5).toNanos(), "returned when the completion came, not at the spin's end");
        }
    }

    @Test
    void aSpinningPollStillTimesOutAndSeesClose() throws Exception {
        Ring ring = new Ring(new AdaptiveSpin(Duration.ofSeconds(20).toNanos(), true));
        WorkCompletion[] out = {new WorkCompletion()};
        long t0 = System.nanoTime();
        assertEquals(0, ring.poll(out, Duration.ofMillis(10)));
        assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(5).toNanos(), "the timeout bounds the spin");
        Thread closer = new Thread(() -> {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                return;
            }
            ring.close();
        });
        closer.start();
        t0 = System.nanoTime();
        assertEquals(0, ring.poll(out, Duration.ofSeconds(30)));
        closer.join();
        assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(10).toNanos(), "close ends a spinning poll");
    }
}
