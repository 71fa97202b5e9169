package io.netreduce.verbs.support;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.Set;

/** What every provider requires of a buffer before it registers it as a memory region. */
public final class Registration {
    private Registration() {
    }

    /**
     * Throws unless {@code buffer} can back a region with {@code access}: it must be direct
     * (a NIC, or a provider thread doing I/O, reaches memory that does not move), and a
     * read-only buffer cannot take writes, local or remote.
     */
    public static void check(ByteBuffer buffer, Set<Access> access) {
        Objects.requireNonNull(buffer, "buffer");
        Objects.requireNonNull(access, "access");
        if (!buffer.isDirect()) {
            throw new VerbsException("cannot register a heap ByteBuffer (" + buffer.capacity() + " bytes): memory "
                    + "regions must be direct buffers (ByteBuffer.allocateDirect), whose memory does not move");
        }
        if (buffer.isReadOnly() && (access.contains(Access.LOCAL_WRITE) || access.contains(Access.REMOTE_WRITE))) {
            throw new VerbsException("cannot grant " + access + " to a read-only buffer: receives and RDMA WRITEs "
                    + "would write into it");
        }
    }
}
