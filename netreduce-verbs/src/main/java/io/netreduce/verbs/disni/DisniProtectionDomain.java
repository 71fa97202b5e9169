package io.netreduce.verbs.disni;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import io.netreduce.verbs.Access;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.support.Registration;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** An {@code ibv_pd} of the device's verbs context. */
final class DisniProtectionDomain implements ProtectionDomain {
    private static final Logger LOG = LoggerFactory.getLogger(DisniProtectionDomain.class);

    private final DisniDevice device;
    private final IbvPd pd;
    private final List<AutoCloseable> children = new CopyOnWriteArrayList<>();
    private volatile boolean open = true;

    DisniProtectionDomain(DisniDevice device, IbvPd pd) {
        this.device = device;
        this.pd = pd;
    }

    IbvPd ibvPd() {
        return pd;
    }

    DisniDevice device() {
        return device;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) {
        Registration.check(buffer, access);
        if (!open) {
            throw new VerbsException("protection domain is closed");
        }
        int flags;
        try {
            flags = DisniMapping.accessFlags(access);
        } catch (IllegalArgumentException e) {
            throw new VerbsException(e.getMessage(), e);
        }
        ByteBuffer whole = buffer.duplicate().clear();
        try {
            IbvMr mr = pd.regMr(whole, flags).execute().free().getMr();
            DisniMemoryRegion region = new DisniMemoryRegion(this, whole, mr, access);
            children.add(region);
            return region;
        } catch (IOException e) {
            throw new VerbsException("ibv_reg_mr of " + buffer.capacity() + " bytes failed on " + device
                    + " (locked-memory limit? see 'ulimit -l'): " + e.getMessage(), e);
        }
    }

    @Override
    public QueuePair createQueuePair(QpAttributes attributes) {
        Objects.requireNonNull(attributes, "attributes");
        if (!open) {
            throw new VerbsException("protection domain is closed");
        }
        if (!(attributes.sendCq() instanceof DisniCompletionQueue) || !(attributes.recvCq() instanceof DisniCompletionQueue)) {
            throw new VerbsException("queue pair attributes name a completion queue of another provider; "
                    + "use completion queues created by this disni device");
        }
        DisniQueuePair qp = device.createQueuePair(this, attributes);
        children.add(qp);
        return qp;
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
                LOG.warn("closing {} failed", c, e);
            }
        }
        try {
            pd.deallocPd();
        } catch (Exception e) {
            LOG.warn("ibv_dealloc_pd failed", e);
        }
    }
}
