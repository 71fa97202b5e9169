package io.netreduce.verbs.tcp;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.support.LocalRegion;
import java.nio.ByteBuffer;
import java.util.Set;

/**
 * A registered direct buffer. There is no NIC, so its "virtual address" is synthetic: the
 * region's id in the upper 32 bits, so that every region of a device has a distinct,
 * non-overlapping address range that an RDMA WRITE can name.
 */
final class TcpMemoryRegion implements LocalRegion {
    private final TcpProtectionDomain pd;
    private final ByteBuffer buffer;
    private final int id;
    private final Set<Access> access;
    private volatile boolean open = true;

    TcpMemoryRegion(TcpProtectionDomain pd, ByteBuffer registered, int id, Set<Access> access) {
        this.pd = pd;
        this.buffer = registered.duplicate().clear();
        this.id = id;
        this.access = Set.copyOf(access);
    }

    static int idOfKey(int key) {
        return key >>> 1;
    }

    int id() {
        return id;
    }

    TcpProtectionDomain pd() {
        return pd;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    /** A fresh view of the whole region for one I/O user; callers cache it. */
    ByteBuffer newView() {
        return buffer.duplicate();
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
        return id << 1;
    }

    @Override
    public int rkey() {
        return (id << 1) | 1;
    }

    @Override
    public long address() {
        return (long) id << 32;
    }

    @Override
    public Set<Access> access() {
        return access;
    }

    /** True if [address, address+length) lies inside this region. */
    boolean covers(long remoteAddress, int len) {
        long offset = remoteAddress - address();
        return offset >= 0 && offset + len <= length();
    }

    @Override
    public void close() {
        if (open) {
            open = false;
            pd.device().unregister(this);
        }
    }

    @Override
    public String toString() {
        return "MR{id=" + id + ", " + length() + " bytes, " + access + "}";
    }

    @Override
    public ProtectionDomain protectionDomain() {
        return pd();
    }
}
