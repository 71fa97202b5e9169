package io.netreduce.verbs.soft;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.support.Registration;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/** A protection domain: memory regions and queue pairs of one device that may use each other. */
final class SoftProtectionDomain implements ProtectionDomain {
    private final SoftDevice device;
    private final List<SoftMemoryRegion> regions = new CopyOnWriteArrayList<>();
    private final List<SoftQueuePair> queuePairs = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    SoftProtectionDomain(SoftDevice device) {
        this.device = device;
    }

    SoftDevice device() {
        return device;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) {
        Registration.check(buffer, access);
        checkOpen();
        SoftMemoryRegion mr = device.register(this, buffer, access);
        regions.add(mr);
        return mr;
    }

    @Override
    public QueuePair createQueuePair(QpAttributes attributes) {
        Objects.requireNonNull(attributes, "attributes");
        checkOpen();
        SoftQueuePair qp = device.createQueuePair(this, attributes);
        queuePairs.add(qp);
        return qp;
    }

    void forget(SoftQueuePair qp) {
        queuePairs.remove(qp);
    }

    private void checkOpen() {
        if (closed) {
            throw new VerbsException("protection domain is closed");
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (SoftQueuePair qp : queuePairs) {
            qp.close();
        }
        for (SoftMemoryRegion mr : regions) {
            mr.close();
        }
        queuePairs.clear();
        regions.clear();
    }
}
