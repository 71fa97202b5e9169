package io.netreduce.verbs;

import java.nio.ByteBuffer;
import java.util.Set;

/**
 * A registered direct buffer (ibverbs' {@code ibv_mr}). Offsets in scatter/gather
 * elements are relative to {@link #buffer()}'s position 0.
 */
public interface MemoryRegion extends AutoCloseable {

    /** The registered buffer (a duplicate with position 0 and limit = {@link #length()}). */
    ByteBuffer buffer();

    int length();

    /** Local key, checked on every local access. */
    int lkey();

    /** Remote key a peer uses to RDMA WRITE or READ this region. */
    int rkey();

    /**
     * The virtual address remote peers use with {@link #rkey()} in RDMA operations; byte
     * {@code i} of the buffer is at {@code address() + i}. On hardware providers it is the
     * buffer's native address.
     */
    long address();

    Set<Access> access();

    /** Deregisters the region; later use of its keys fails. */
    @Override
    void close();
}
