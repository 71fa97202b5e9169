package io.netreduce.collectives.rendezvous;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The rendezvous store against lines no netreduce rank sends, over real sockets: a rank that
 * sends one fails the group with a message that names it; a connection that never said
 * which rank it is only loses its own connection.
 */
@Timeout(30)
class StoreServerTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @Test
    void aRankThatSendsAnUnreadableLineFailsTheGroupSayingSo() throws Exception {
        try (StoreServer server = new StoreServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 3);
             StoreClient rank0 = StoreClient.connect(server.address(), 0, TIMEOUT);
             Socket rank1 = new Socket()) {
            rank1.connect(server.address());
            OutputStream out = rank1.getOutputStream();
            BufferedReader in = new BufferedReader(new InputStreamReader(rank1.getInputStream(), StandardCharsets.UTF_8));
            out.write("HELLO 1\n".getBytes(StandardCharsets.UTF_8));
            assertEquals("R OK", in.readLine());
            out.write("MISMATCH seven rank 1 disagrees\n".getBytes(StandardCharsets.UTF_8));
            String failure = awaitFailure(rank0);
            assertTrue(failure.startsWith("rank 1 sent the rendezvous store 'MISMATCH seven rank 1 disagrees'")
                    && failure.contains("cannot read"), failure);
            try (StoreClient late = StoreClient.connect(server.address(), 2, TIMEOUT)) {
                assertEquals(failure, awaitFailure(late), "what a rank that joins later is told");
            }
        }
    }

    @Test
    void aStrangerThatSendsAnUnreadableLineOnlyLosesItsConnection() throws Exception {
        try (StoreServer server = new StoreServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 2);
             StoreClient rank0 = StoreClient.connect(server.address(), 0, TIMEOUT);
             Socket stranger = new Socket()) {
            stranger.connect(server.address());
            stranger.getOutputStream().write("HELLO world\n".getBytes(StandardCharsets.UTF_8));
            BufferedReader in = new BufferedReader(new InputStreamReader(stranger.getInputStream(), StandardCharsets.UTF_8));
            assertNull(in.readLine(), "the store closed the stranger's connection without an answer");
            try (StoreClient rank1 = StoreClient.connect(server.address(), 1, TIMEOUT)) {
                rank0.set("k", "v", TIMEOUT);
                assertEquals("v", rank1.get("k", TIMEOUT), "the group still works");
                assertNull(rank0.failure(), "the group did not fail");
                assertNull(rank1.failure(), "the group did not fail");
            }
        }
    }

    private static String awaitFailure(StoreClient c) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (c.failure() == null && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertTrue(c.failure() != null, "no failure reached the rank within " + TIMEOUT);
        return c.failure();
    }
}
