package io.netreduce.verbs.disni;

import com.ibm.disni.verbs.IbvMr;
import io.netreduce.verbs.Access;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.support.LocalRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A direct buffer registered with the NIC ({@code ibv_reg_mr}); its address is the buffer's native address. */
final class DisniMemoryRegion implements LocalRegion {
    private static final Logger LOG = LoggerFactory.getLogger(DisniMemoryRegion.class);

    private final DisniProtectionDomain pd;
    private final ByteBuffer buffer;
    private final IbvMr mr;
    private final Set<Access> access;
    private volatile boolean open = true;

    DisniMemoryRegion(DisniProtectionDomain pd, ByteBuffer registered, IbvMr mr, Set<Access> access) {
        this.pd = pd;
        this.buffer = registered.duplicate().clear();
        this.mr = mr;
        this.access = Set.copyOf(access);
    }

    DisniProtectionDomain pd() {
        return pd;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public ByteBuffer buffer() {
        return buffer.duplicate();
    }

    @Override
    public int length() {
        return buffer.capacity();
    }

    @Override
    public int lkey() {
        return mr.getLkey();
    }

    @Override
    public int rkey() {
        return mr.getRkey();
    }

    @Override
    public long address() {
        return mr.getAddr();
    }

    @Override
    public Set<Access> access() {
        return access;
    }

    @Override
    public void close() {
        if (!open) {
            return;
        }
        open = false;
        try {
            mr.deregMr().execute().free();
        } catch (IOException e) {
            LOG.warn("ibv_dereg_mr of lkey {} failed", mr.getLkey(), e);
        }
    }

    @Override
    public ProtectionDomain protectionDomain() {
        return pd();
    }
}
