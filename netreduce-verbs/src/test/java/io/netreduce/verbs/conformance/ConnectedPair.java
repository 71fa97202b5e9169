package io.netreduce.verbs.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;

/**
 * Two devices (hosts 0 and 1) with one protection domain, one send and one receive
 * completion queue and one queue pair each, connected to each other the way an
 * application does it: create, exchange {@link io.netreduce.verbs.QpEndpoint}s, then both
 * sides call connect concurrently.
 */
final class ConnectedPair implements AutoCloseable {
    static final Duration POLL_DEADLINE = Duration.ofSeconds(10);

    final ProviderFixture fixture;
    final Side a;
    final Side b;

    static final class Side {
        final Device device;
        final ProtectionDomain pd;
        final CompletionQueue sendCq;
        final CompletionQueue recvCq;
        final QueuePair qp;
        private final List<MemoryRegion> regions = new ArrayList<>();

        Side(ProviderFixture fixture, int host, UnaryOperator<QpAttributes.Builder> attrs) {
            Device d = fixture.open(host);
            try {
                device = d;
                pd = d.allocateProtectionDomain();
                sendCq = d.createCompletionQueue(1024);
                recvCq = d.createCompletionQueue(1024);
                qp = pd.createQueuePair(attrs.apply(fixture.tune(QpAttributes.builder(sendCq, recvCq))).build());
            } catch (RuntimeException e) {
                d.close();
                throw e;
            }
        }

        /** Registers a fresh direct buffer of {@code size} bytes with every access right. */
        MemoryRegion region(int size) {
            MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(size),
                    EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
            regions.add(mr);
            return mr;
        }

        /** Polls one completion from {@code cq}, failing the test if none arrives in time. */
        WorkCompletion pollOne(CompletionQueue cq) throws InterruptedException {
            WorkCompletion[] out = {new WorkCompletion()};
            long deadline = System.nanoTime() + POLL_DEADLINE.toNanos();
            while (System.nanoTime() < deadline) {
                if (cq.poll(out, Duration.ofMillis(100)) == 1) {
                    return out[0];
                }
            }
            throw new AssertionError("no completion on QP " + qp.qpn() + " within " + POLL_DEADLINE
                    + " (state " + qp.state() + ", counters " + qp.counters() + ")");
        }

        WorkCompletion pollSend() throws InterruptedException {
            return pollOne(sendCq);
        }

        WorkCompletion pollRecv() throws InterruptedException {
            return pollOne(recvCq);
        }

        /** Asserts that {@code cq} stays empty for {@code quiet}. */
        void assertNoCompletion(CompletionQueue cq, Duration quiet) throws InterruptedException {
            WorkCompletion[] out = {new WorkCompletion()};
            int n = cq.poll(out, quiet);
            assertEquals(0, n, () -> "unexpected completion " + out[0]);
        }
    }

    ConnectedPair(ProviderFixture fixture) throws Exception {
        this(fixture, UnaryOperator.identity(), UnaryOperator.identity());
    }

    ConnectedPair(ProviderFixture fixture, UnaryOperator<QpAttributes.Builder> attrsA,
                  UnaryOperator<QpAttributes.Builder> attrsB) throws Exception {
        this(fixture, attrsA, attrsB, true);
    }

    /** Both sides created, queue pairs still in INIT: the test connects them itself. */
    static ConnectedPair unconnected(ProviderFixture fixture) throws Exception {
        return new ConnectedPair(fixture, UnaryOperator.identity(), UnaryOperator.identity(), false);
    }

    private ConnectedPair(ProviderFixture fixture, UnaryOperator<QpAttributes.Builder> attrsA,
                          UnaryOperator<QpAttributes.Builder> attrsB, boolean connect) throws Exception {
        this.fixture = fixture;
        a = new Side(fixture, 0, attrsA);
        Side created = null;
        try {
            created = new Side(fixture, 1, attrsB);
        } finally {
            if (created == null) {
                a.device.close();
            }
        }
        b = created;
        try {
            if (connect) {
                connect(a.qp, b.qp, fixture.connectTimeout());
            }
        } catch (Exception | AssertionError e) {
            close();
            throw e;
        }
    }

    /** Connects two queue pairs concurrently, as two hosts would. */
    static void connect(QueuePair x, QueuePair y, Duration timeout) throws Exception {
        CompletableFuture<Void> other = CompletableFuture.runAsync(() -> y.connect(x.localEndpoint(), timeout));
        try {
            x.connect(y.localEndpoint(), timeout);
        } finally {
            try {
                other.get(timeout.toMillis() + 2_000, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof RuntimeException) {
                    throw (RuntimeException) e.getCause();
                }
                throw e;
            } catch (TimeoutException e) {
                throw new AssertionError("peer connect did not return within " + timeout, e);
            }
        }
        assertTrue(x.remoteEndpoint() != null && y.remoteEndpoint() != null, "both sides know their peer");
    }

    @Override
    public void close() {
        if (b != null) {
            b.device.close();
        }
        a.device.close();
    }
}
