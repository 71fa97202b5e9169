package io.netreduce.testkit.inproc;

import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.Access;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Counters;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.VerbsException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** An inproc device; it is also its own (single) protection domain. */
final class InprocDevice implements Device, ProtectionDomain {
    private final DeviceOptions options;
    final InetSocketAddress address;
    private final Counters counters = new Counters();
    private final AtomicInteger nextQpn = new AtomicInteger(1);
    private final AtomicInteger nextKey = new AtomicInteger(1);
    final Map<Integer, InprocQueuePair> queuePairs = new ConcurrentHashMap<>();
    volatile boolean closed;

    InprocDevice(DeviceOptions options, InetSocketAddress address) {
        this.options = options;
        this.address = address;
    }

    @Override
    public String providerName() {
        return InprocProvider.NAME;
    }

    @Override
    public TransportCapabilities capabilities() {
        return InprocProvider.CAPABILITIES;
    }

    @Override
    public DeviceOptions options() {
        return options;
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() {
        return this;
    }

    @Override
    public CompletionQueue createCompletionQueue(int capacity) {
        return new InprocCompletionQueue(capacity);
    }

    @Override
    public Counters counters() {
        return counters;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) {
        if (!buffer.isDirect()) {
            throw new VerbsException("only direct buffers can be registered");
        }
        return new InprocMemoryRegion(buffer, nextKey.getAndIncrement(), access);
    }

    @Override
    public QueuePair createQueuePair(QpAttributes attributes) {
        InprocQueuePair qp = new InprocQueuePair(this, nextQpn.getAndIncrement(), attributes);
        queuePairs.put(qp.qpn(), qp);
        return qp;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        InprocProvider.DEVICES.remove(address, this);
        for (InprocQueuePair qp : queuePairs.values()) {
            qp.close();
        }
    }
}
