package io.netreduce.collectives.algorithm;

import io.netreduce.wire.ina.InaHeader;

import io.netreduce.collectives.algorithm.netreduce.MessageHooks;
import io.netreduce.collectives.algorithm.MessagePlan;
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
 * Where an all-reduce's input and output live for the NIC. A direct buffer in the payload
 * byte order is registered once (an LRU cache of regions, keyed by the identity of the
 * buffer that owns the memory) and used in place. Anything else (heap, read-only, the other
 * byte order) is staged through a registered buffer that grows to the largest tensor seen:
 * message by message for the sliding window (input copied in just before a slice is sent,
 * the result copied out as soon as it is in), whole for the ring.
 *
 * <p>When both sides are staged they share one staging buffer, so the algorithm runs in
 * place there; when only the input is staged it gets a staging buffer of its own, because
 * the algorithms read the input after they have started writing the output.
 * Used by one thread (the communicator's worker).
 */
public final class TensorMemory implements AutoCloseable, MessageHooks {
    private static final int CACHE_ENTRIES = 32;
    private static final EnumSet<Access> ACCESS = EnumSet.of(Access.LOCAL_WRITE);

    private final ProtectionDomain pd;
    private final Map<IdentityKey, MemoryRegion> registered = new LinkedHashMap<>(16, 0.75f, true);
    private final Staging outputStaging = new Staging();
    private final Staging inputStaging = new Staging();

    private MemoryRegion inputRegion;
    private int inputOffset;
    private MemoryRegion outputRegion;
    private int outputOffset;
    /** The user buffers copied through staging (null when used in place), and where their copies live. */
    private FloatBuffer stagedInput;
    private FloatBuffer stagedInputCopy;
    private FloatBuffer stagedOutput;

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

    /** One growable registered buffer. */
    private final class Staging {
        MemoryRegion region;
        FloatBuffer floats;

        MemoryRegion ensure(int bytes) {
            if (region == null || region.length() < bytes) {
                if (region != null) {
                    region.close();
                }
                ByteBuffer b = DirectBuffers.allocate(Math.max(bytes, 4096));
                region = pd.register(b, ACCESS);
                floats = b.order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();
            }
            return region;
        }

        void close() {
            if (region != null) {
                region.close();
            }
        }
    }

    public TensorMemory(ProtectionDomain pd) {
        this.pd = pd;
    }

    /**
     * Prepares the remaining elements of {@code input} and {@code output} (the same buffer
     * for in place; equal lengths, checked by the caller). With {@code stageWhole}, a staged
     * input is copied in now (for algorithms that read it all at once); otherwise the caller
     * uses this object as the {@link MessageHooks} of the sliding window.
     */
    public void bind(FloatBuffer input, FloatBuffer output, boolean stageWhole) {
        int bytes = output.remaining() * 4;
        stagedInput = null;
        stagedOutput = null;
        DirectBuffers.Root out = usableRoot(output);
        if (out != null) {
            outputRegion = registration(out.buffer());
            outputOffset = (int) (out.byteOffset() + 4L * output.position());
        } else {
            outputRegion = outputStaging.ensure(bytes);
            outputOffset = 0;
            stagedOutput = output;
        }
        DirectBuffers.Root in = input == output ? out : usableRoot(input);
        if (in != null) {
            inputRegion = registration(in.buffer());
            inputOffset = (int) (in.byteOffset() + 4L * input.position());
        } else if (stagedOutput != null) {
            inputRegion = outputRegion;
            inputOffset = 0;
            stagedInput = input;
            stagedInputCopy = outputStaging.floats;
        } else {
            inputRegion = inputStaging.ensure(bytes);
            inputOffset = 0;
            stagedInput = input;
            stagedInputCopy = inputStaging.floats;
        }
        if (stageWhole) {
            beforeSend(0, output.remaining());
        }
    }

    private static DirectBuffers.Root usableRoot(FloatBuffer b) {
        if (b.order() != InaHeader.PAYLOAD_ORDER) {
            return null;
        }
        DirectBuffers.Root root = DirectBuffers.root(b);
        return root != null && root.byteOffset() + 4L * b.limit() <= Integer.MAX_VALUE ? root : null;
    }

    public boolean staged() {
        return stagedInput != null || stagedOutput != null;
    }

    public MemoryRegion inputRegion() {
        return inputRegion;
    }

    public int inputOffset() {
        return inputOffset;
    }

    public MemoryRegion outputRegion() {
        return outputRegion;
    }

    public int outputOffset() {
        return outputOffset;
    }

    /** Copies a staged output back (all of it); nothing for an output used in place. */
    public void unstageWhole() {
        if (stagedOutput != null) {
            afterResult(0, stagedOutput.remaining());
        }
    }

    @Override
    public void beforeSend(int elementOffset, int elementCount) {
        if (stagedInput != null) {
            stagedInputCopy.put(elementOffset, stagedInput, stagedInput.position() + elementOffset, elementCount);
        }
    }

    @Override
    public void afterResult(int elementOffset, int elementCount) {
        if (stagedOutput != null) {
            stagedOutput.put(stagedOutput.position() + elementOffset, outputStaging.floats, elementOffset,
                    elementCount);
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
        outputStaging.close();
        inputStaging.close();
    }
}
