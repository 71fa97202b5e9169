package io.netreduce.collectives.algorithm;

import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the direct {@link ByteBuffer} a direct {@link FloatBuffer} views, and the byte
 * offset of the view's element 0 in it, so the memory can be registered without a copy.
 * Java 17 has no public way to do this; like Netty, we read the JDK's {@code address} and
 * {@code att} fields through {@code sun.misc.Unsafe}. If the JDK's layout differs, this
 * says so once in the log and every buffer is staged instead (slower, still correct).
 */
public final class DirectBuffers {
    private static final Logger LOG = LoggerFactory.getLogger(DirectBuffers.class);
    private static final sun.misc.Unsafe UNSAFE;
    private static final long ADDRESS;
    private static final long FLOAT_U_ATT;
    private static final long FLOAT_S_ATT;
    private static final long BYTE_ATT;

    static {
        sun.misc.Unsafe u = null;
        long address = -1;
        long floatU = -1;
        long floatS = -1;
        long bytes = -1;
        try {
            Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            u = (sun.misc.Unsafe) f.get(null);
            address = u.objectFieldOffset(Buffer.class.getDeclaredField("address"));
            floatU = u.objectFieldOffset(Class.forName("java.nio.DirectFloatBufferU").getDeclaredField("att"));
            floatS = u.objectFieldOffset(Class.forName("java.nio.DirectFloatBufferS").getDeclaredField("att"));
            bytes = u.objectFieldOffset(Class.forName("java.nio.DirectByteBuffer").getDeclaredField("att"));
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.warn("cannot see the memory behind direct FloatBuffers on this JDK ({}); "
                    + "direct tensors will be staged through registered memory", e.toString());
            u = null;
        }
        UNSAFE = u;
        ADDRESS = address;
        FLOAT_U_ATT = floatU;
        FLOAT_S_ATT = floatS;
        BYTE_ATT = bytes;
    }

    /** The root direct buffer behind a view and the byte offset of the view's element 0. */
    public record Root(ByteBuffer buffer, long byteOffset) {
    }

    private DirectBuffers() {
    }

    /** The alignment of {@link #allocate}: one cache line, and the width of an AVX-512 vector. */
    public static final int ALIGNMENT = 64;

    /**
     * A direct buffer of exactly {@code bytes} whose first byte starts a cache line.
     * {@link ByteBuffer#allocateDirect} returns what malloc gives, 16-byte aligned, so every
     * 64-byte vector load or store of a reduction straddles two cache lines, and so do the
     * kernel's socket copies in and out of the buffer (measured on a Zen 4: a 1 MiB sum out of
     * a staging slot into a tensor at 16.7 GB/s against 22.6 aligned; a C exchange of 2 MiB
     * over loopback TCP 4-5 % slower from and into such buffers; the ring over tcp 1.03-1.04x
     * the busbw at 2-4 MiB with aligned tensors, docs/benchmarks.md).
     */
    public static ByteBuffer allocate(int bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("negative buffer length: " + bytes);
        }
        long rounded = ((long) bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
        ByteBuffer raw = ByteBuffer.allocateDirect(Math.toIntExact(rounded + ALIGNMENT - 1));
        // The aligned slice keeps at least `rounded` bytes; the view keeps the root alive.
        return raw.alignedSlice(ALIGNMENT).limit(bytes).slice();
    }

    /**
     * Frees a direct buffer's memory now (for a mapped one, unmaps it) rather than whenever
     * the collector gets to it; false if this JDK does not let us (then the collector does).
     * Nothing may touch the buffer afterwards.
     */
    public static boolean release(ByteBuffer buffer) {
        if (UNSAFE == null || !buffer.isDirect()) {
            return false;
        }
        UNSAFE.invokeCleaner(buffer);
        return true;
    }

    /** Null if {@code fb} is not direct or its memory cannot be found. */
    public static Root root(FloatBuffer fb) {
        if (UNSAFE == null || !fb.isDirect()) {
            return null;
        }
        String cls = fb.getClass().getName();
        long attOffset = cls.equals("java.nio.DirectFloatBufferU") ? FLOAT_U_ATT
                : cls.equals("java.nio.DirectFloatBufferS") ? FLOAT_S_ATT : -1;
        if (attOffset < 0) {
            return null;
        }
        Object att = UNSAFE.getObject(fb, attOffset);
        if (!(att instanceof ByteBuffer root) || !root.isDirect()) {
            return null;
        }
        if (root.getClass().getName().equals("java.nio.DirectByteBuffer")) {
            Object parent = UNSAFE.getObject(root, BYTE_ATT);
            if (parent instanceof ByteBuffer p && p.isDirect()) {
                root = p;
            }
        }
        long offset = UNSAFE.getLong(fb, ADDRESS) - UNSAFE.getLong(root, ADDRESS);
        if (offset < 0 || offset + 4L * fb.capacity() > root.capacity()) {
            return null;
        }
        return new Root(root, offset);
    }
}
