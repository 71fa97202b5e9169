package io.netreduce.verbs;

import java.nio.ByteBuffer;
import java.util.Set;

/** A protection domain (ibverbs' {@code ibv_pd}): memory regions and queue pairs live in one. */
public interface ProtectionDomain extends AutoCloseable {

    /**
     * Registers a direct buffer's whole capacity. A heap buffer is refused with a
     * {@link VerbsException}: a NIC can only reach memory that does not move.
     */
    MemoryRegion register(ByteBuffer buffer, Set<Access> access);

    /** Creates an RC queue pair in {@link QpState#INIT}, ready for receives to be posted. */
    QueuePair createQueuePair(QpAttributes attributes);

    @Override
    void close();
}
