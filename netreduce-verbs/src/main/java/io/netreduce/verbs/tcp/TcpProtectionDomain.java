package io.netreduce.verbs.tcp;

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

/** A protection domain: regions and queue pairs of one PD may only be used together. */
final class TcpProtectionDomain implements ProtectionDomain {
    private final TcpDevice device;
    private final List<AutoCloseable> children = new CopyOnWriteArrayList<>();
    private volatile boolean open = true;

    TcpProtectionDomain(TcpDevice device) {
        this.device = device;
    }

    TcpDevice device() {
        return device;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) {
        Registration.check(buffer, access);
        checkOpen();
        TcpMemoryRegion mr = device.register(this, buffer, access);
        children.add(mr);
        return mr;
    }

    @Override
    public QueuePair createQueuePair(QpAttributes attributes) {
        Objects.requireNonNull(attributes, "attributes");
        checkOpen();
        if (!(attributes.sendCq() instanceof TcpCompletionQueue) || !(attributes.recvCq() instanceof TcpCompletionQueue)) {
            throw new VerbsException("queue pair attributes name a completion queue of another provider; "
                    + "use completion queues created by this tcp device");
        }
        TcpQueuePair qp = device.createQueuePair(this, attributes);
        children.add(qp);
        return qp;
    }

    private void checkOpen() {
        if (!open) {
            throw new VerbsException("protection domain is closed");
        }
    }

    @Override
    public void close() {
        if (!open) {
            return;
        }
        open = false;
        for (AutoCloseable c : children) {
            try {
                c.close();
            } catch (Exception e) {
                // Closing is best effort: one child failing must not leak the others.
                org.slf4j.LoggerFactory.getLogger(TcpProtectionDomain.class).warn("closing {} failed", c, e);
            }
        }
        children.clear();
    }
}
