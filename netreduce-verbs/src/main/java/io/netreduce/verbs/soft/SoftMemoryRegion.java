package io.netreduce.verbs.soft;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.support.LocalRegion;
import io.netreduce.wire.udp.NativeUdp;
import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * A registered direct buffer. Its {@link #address()} is a device-local virtual address
 * (regions are laid out one after another in a synthetic address space), so RDMA WRITE
 * targets are checked against the region found by rkey without touching native pointers.
 */
final class SoftMemoryRegion implements LocalRegion {
    private final SoftProtectionDomain pd;
    /** Provider-side view: absolute accesses only, so sharing it across threads is safe. */
    final ByteBuffer memory;
    private final int length;
    private final int lkey;
    private final int rkey;
    private final long address;
    private final Set<Access> access;
    private volatile boolean closed;
    /** The buffer's native address, for sends that gather payloads in place (0 until first asked). */
    private long nativeAddress;

    SoftMemoryRegion(SoftProtectionDomain pd, ByteBuffer buffer, Set<Access> access, int lkey, int rkey, long address) {
        this.pd = pd;
        this.memory = buffer.duplicate().clear();
        this.length = buffer.capacity();
        this.lkey = lkey;
        this.rkey = rkey;
        this.address = address;
        this.access = access.isEmpty() ? Collections.emptySet() : Collections.unmodifiableSet(EnumSet.copyOf(access));
    }

    /** Where {@link #memory} starts in this process, for a send plan's iovecs (native I/O only). */
    long nativeAddress() {
        long a = nativeAddress;
        if (a == 0) {
            a = NativeUdp.address(memory);
            nativeAddress = a;
        }
        return a;
    }

    SoftProtectionDomain pd() {
        return pd;
    }

    boolean isClosed() {
        return closed;
    }

    boolean allows(Access a) {
        return access.contains(a);
    }

    @Override
    public ByteBuffer buffer() {
        return memory.duplicate().clear();
    }

    @Override
    public int length() {
        return length;
    }

    @Override
    public int lkey() {
        return lkey;
    }

    @Override
    public int rkey() {
        return rkey;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public Set<Access> access() {
        return access;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            pd.device().deregister(this);
        }
    }

    @Override
    public String toString() {
        return "MR{lkey=0x" + Integer.toHexString(lkey) + ", rkey=0x" + Integer.toHexString(rkey) + ", addr=0x"
                + Long.toHexString(address) + ", len=" + length + "}";
    }

    @Override
    public ProtectionDomain protectionDomain() {
        return pd();
    }

    @Override
    public boolean isOpen() {
        return !isClosed();
    }
}
