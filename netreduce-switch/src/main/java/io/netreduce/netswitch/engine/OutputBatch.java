package io.netreduce.netswitch.engine;

import java.nio.ByteBuffer;

/**
 * Preallocated datagrams the engine emits into: each slot is a buffer of
 * {@link #MAX_DATAGRAM} bytes plus its destination address and port. The caller drains the
 * batch (sends, inspects) and {@link #clear()}s it; nothing is allocated per packet.
 */
public final class OutputBatch {
    /** BTH + ImmDt + a 4096-byte payload + ICRC, with room to spare. */
    public static final int MAX_DATAGRAM = 4096 + 64;

    private final ByteBuffer block;
    private final ByteBuffer[] buffers;
    private final int[] ips;
    private final int[] ports;
    private final int[] lengths;
    private int count;
    private Drain drain;

    /** Empties a batch the engine filled in the middle of one input datagram (the data plane's send); must clear it. */
    public interface Drain {
        void drain(OutputBatch batch);
    }

    /** @param direct direct buffers suit socket I/O; heap buffers suit tests and simulation. */
    public OutputBatch(int capacity, boolean direct) {
        if (capacity < RingConfig.MAX_RANKS) {
            throw new IllegalArgumentException("an output batch must hold at least one completion ("
                    + RingConfig.MAX_RANKS + " packets): " + capacity);
        }
        buffers = new ByteBuffer[capacity];
        block = direct ? ByteBuffer.allocateDirect(capacity * MAX_DATAGRAM)
                : ByteBuffer.allocate(capacity * MAX_DATAGRAM);
        for (int i = 0; i < capacity; i++) {
            block.limit((i + 1) * MAX_DATAGRAM).position(i * MAX_DATAGRAM);
            buffers[i] = block.slice();
        }
        ips = new int[capacity];
        ports = new int[capacity];
        lengths = new int[capacity];
    }

    public int capacity() {
        return buffers.length;
    }

    public int size() {
        return count;
    }

    public int remaining() {
        return buffers.length - count;
    }

    public void clear() {
        count = 0;
    }

    /**
     * Lets the engine drain a full batch through {@code d} while it handles one datagram
     * (a completion that also resends a long run of results emits more than one batch holds).
     * Without a drain, the engine drops what does not fit and counts it.
     */
    public void drainWith(Drain d) {
        drain = d;
    }

    /** Whether {@code n} more datagrams fit, draining the batch first when they do not and a drain is set. */
    boolean makeRoom(int n) {
        if (buffers.length - count < n && drain != null && count > 0) {
            drain.drain(this);
        }
        return buffers.length - count >= n;
    }

    /** Buffer of the next datagram, to fill from index 0; it counts once {@link #commit}ted. */
    ByteBuffer next() {
        return buffers[count];
    }

    void commit(int ip, int port, int length) {
        ips[count] = ip;
        ports[count] = port;
        lengths[count] = length;
        count++;
    }

    /** The memory of every slot: datagram {@code i} starts at {@link #offset(int)} in it. */
    public ByteBuffer block() {
        return block;
    }

    /** Where datagram {@code i} starts in {@link #block()}. */
    public int offset(int i) {
        return i * MAX_DATAGRAM;
    }

    /** Datagram {@code i}: its bytes are [0, {@link #length(int)}) of this buffer. */
    public ByteBuffer buffer(int i) {
        return buffers[i];
    }

    public int length(int i) {
        return lengths[i];
    }

    public int ip(int i) {
        return ips[i];
    }

    public int port(int i) {
        return ports[i];
    }
}
