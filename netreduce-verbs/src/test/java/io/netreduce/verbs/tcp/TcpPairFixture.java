package io.netreduce.verbs.tcp;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.Verbs;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * Two tcp devices on their own loopback addresses, one completion queue and one connected
 * queue pair each (x on a, y on b), and a registered buffer on each side (src on a, dst on
 * b): the setup of the tests that watch one connection's requests and ACKs.
 */
class TcpPairFixture implements AutoCloseable {
    final Device a;
    final Device b;
    final CompletionQueue cqa;
    final CompletionQueue cqb;
    final QueuePair x;
    final QueuePair y;
    final MemoryRegion src;
    final MemoryRegion dst;

    /** {@code attributes} adds to each side's defaults (its completion queue for both queues). */
    TcpPairFixture(String addressA, String addressB, TcpProgress progress, int cqDepth, int bufferBytes,
                   UnaryOperator<QpAttributes.Builder> attributes) throws Exception {
        a = open(addressA, progress);
        b = open(addressB, progress);
        cqa = a.createCompletionQueue(cqDepth);
        cqb = b.createCompletionQueue(cqDepth);
        ProtectionDomain pda = a.allocateProtectionDomain();
        ProtectionDomain pdb = b.allocateProtectionDomain();
        x = pda.createQueuePair(attributes.apply(QpAttributes.builder(cqa, cqa)).build());
        y = pdb.createQueuePair(attributes.apply(QpAttributes.builder(cqb, cqb)).build());
        src = pda.register(ByteBuffer.allocateDirect(bufferBytes), EnumSet.of(Access.LOCAL_WRITE));
        dst = pdb.register(ByteBuffer.allocateDirect(bufferBytes), EnumSet.of(Access.LOCAL_WRITE));
        CompletableFuture<Void> f = CompletableFuture.runAsync(() -> y.connect(x.localEndpoint(), Duration.ofSeconds(10)));
        x.connect(y.localEndpoint(), Duration.ofSeconds(10));
        f.get(10, TimeUnit.SECONDS);
    }

    private static Device open(String address, TcpProgress progress) {
        return Verbs.open("tcp", DeviceOptions.builder().localAddress(address).port(0)
                .property(TcpVerbsProvider.PROGRESS, progress.name()).build());
    }

    @Override
    public void close() {
        x.close();
        y.close();
        a.close();
        b.close();
    }
}
