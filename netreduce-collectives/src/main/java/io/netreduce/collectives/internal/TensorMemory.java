package io.netreduce.collectives.internal;

import io.netreduce.host.MessageHooks;
import io.netreduce.host.MessagePlan;
import io.netreduce.verbs.Access;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Where a tensor's bytes live for the NIC. A direct buffer in the payload byte order is
 * registered once (an LRU cache of regions, keyed by the identity of the buffer that owns
 * the memory) and used in place. Anything else is staged through one registered buffer
 * that grows to the largest tensor seen: message by message for the sliding window (copy
 * in just before a slice is sent, out as soon as its result is in), whole for the ring.
 * Used by one thread (the communicator's worker).
 */
public final class TensorMemory implements AutoCloseable, MessageHooks {
    private static final int CACHE_ENTRIES = 32;
    private static final EnumSet<Access> ACCESS = EnumSet.of(Access.LOCAL_WRITE);

    private final ProtectionDomain pd;
    private final Map<IdentityKey, MemoryRegion> registered = new LinkedHashMap<>(16, 0.75f, true);
    private MemoryRegion staging;
    private FloatBuffer stagingFloats;

    /** The region and byte offset a tensor uses, and the user buffer to copy when staged. */
    private MemoryRegion region;
    private int byteOffset;
    private FloatBuffer stagedUser;

    private record IdentityKey(ByteBuffer buffer) {
        @Override
        public boolean equals(Object o) {
            return o instanceof IdentityKey k && k.buffer == buffer;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(buffer);
        }
    }

    public TensorMemory(ProtectionDomain pd) {
        this.pd = pd;
    }

    /**
     * Prepares {@code tensor}'s remaining elements. With {@code stageWhole}, a staged tensor
     * is copied in now (for algorithms that read it all at once); otherwise the caller uses
     * this object as the {@link MessageHooks} of the sliding window.
     */
    public void bind(FloatBuffer tensor, boolean stageWhole) {
        stagedUser = null;
        DirectBuffers.Root root = tensor.order() == MessagePlan.PAYLOAD_ORDER ? DirectBuffers.root(tensor) : null;
        if (root != null && root.byteOffset() + 4L * tensor.limit() <= Integer.MAX_VALUE) {
            region = registration(root.buffer());
            byteOffset = (int) (root.byteOffset() + 4L * tensor.position());
            return;
        }
        int bytes = tensor.remaining() * 4;
        if (staging == null || staging.length() < bytes) {
            if (staging != null) {
                staging.close();
            }
            ByteBuffer b = ByteBuffer.allocateDirect(Math.max(bytes, 4096));
            staging = pd.register(b, ACCESS);
            stagingFloats = b.order(MessagePlan.PAYLOAD_ORDER).asFloatBuffer();
        }
        region = staging;
        byteOffset = 0;
        stagedUser = tensor;
        if (stageWhole) {
            beforeSend(0, tensor.remaining());
        }
    }

    public boolean staged() {
        return stagedUser != null;
    }

    public MemoryRegion region() {
        return region;
    }

    public int byteOffset() {
        return byteOffset;
    }

    /** Copies a staged tensor's result back (all of it); nothing for an in-place tensor. */
    public void unstageWhole() {
        if (stagedUser != null) {
            afterResult(0, stagedUser.remaining());
        }
    }

    @Override
    public void beforeSend(int elementOffset, int elementCount) {
        if (stagedUser != null) {
            stagingFloats.put(elementOffset, stagedUser, stagedUser.position() + elementOffset, elementCount);
        }
    }

    @Override
    public void afterResult(int elementOffset, int elementCount) {
        if (stagedUser != null) {
            stagedUser.put(stagedUser.position() + elementOffset, stagingFloats, elementOffset, elementCount);
        }
    }

    private MemoryRegion registration(ByteBuffer root) {
        IdentityKey key = new IdentityKey(root);
        MemoryRegion mr = registered.get(key);
        if (mr == null) {
            mr = pd.register(root, ACCESS);
            registered.put(key, mr);
            if (registered.size() > CACHE_ENTRIES) {
                Iterator<MemoryRegion> eldest = registered.values().iterator();
                eldest.next().close();
                eldest.remove();
            }
        }
        return mr;
    }

    @Override
    public void close() {
        registered.values().forEach(MemoryRegion::close);
        registered.clear();
        if (staging != null) {
            staging.close();
        }
    }
}
