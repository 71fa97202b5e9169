package io.netreduce.netswitch.engine;

import java.nio.ByteBuffer;

/**
 * Preallocated datagrams the engine emits into: each slot is a buffer of
 * {@link #MAX_DATAGRAM} bytes plus its destination address and port. The caller drains the
 * batch (sends, inspects) and {@link #clear()}s it; nothing is allocated per packet.
 *
 * <p>A batch that {@link #gathers()} (the native data plane's) holds a result packet without
 * its payload: the slot has the headers and, right after them, the ICRC
 * ({@link #headerLength(int)} bytes, then 4), and the sum stays in the ring's memory
 * ({@link #payload(int)}); the socket gathers the three, so each of the P
 * copies of a result costs no copy in user space. Such memory changes only when a ring
 * reuses a slot, and the ring first {@link #releaseReferences() sends} what names it.
 */
public final class OutputBatch {
    /** BTH + ImmDt + a 4096-byte payload + ICRC, with room to spare. */
    public static final int MAX_DATAGRAM = 4096 + 64;

    private final ByteBuffer block;
    private final ByteBuffer[] buffers;
    private final int[] ips;
    private final int[] ports;
    private final int[] lengths;
    private final boolean gathers;
    /** Per datagram: 0 if it lies whole in its slot, else the length of the headers before its ICRC there. */
    private final int[] headerLengths;
    private final ByteBuffer[] payloads;
    private final int[] payloadOffsets;
    private final int[] payloadLengths;
    /** Datagrams of the batch that name a payload in place. */
    private int gathered;
    private int count;
    private Drain drain;

    /** Empties a batch the engine filled in the middle of one input datagram (the data plane's send); must clear it. */
    public interface Drain {
        void drain(OutputBatch batch);
    }

    /** @param direct direct buffers suit socket I/O; heap buffers suit tests and simulation. */
    public OutputBatch(int capacity, boolean direct) {
        this(capacity, direct, false);
    }

    /**
     * @param gathers result payloads stay where the ring summed them, named by address (for a
     *                native send that gathers; only with a {@link #drainWith drain})
     */
    public OutputBatch(int capacity, boolean direct, boolean gathers) {
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
        this.gathers = gathers;
        headerLengths = new int[capacity];
        payloads = new ByteBuffer[capacity];
        payloadOffsets = new int[capacity];
        payloadLengths = new int[capacity];
    }

    /** True if result payloads stay in the ring's memory (see the class comment). */
    public boolean gathers() {
        return gathers;
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
        gathered = 0;
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
        headerLengths[count] = 0;
        ips[count] = ip;
        ports[count] = port;
        lengths[count] = length;
        count++;
    }

    /**
     * Commits a datagram of {@code length} bytes whose slot holds its {@code headerLength}
     * bytes of headers and then its ICRC, and whose {@code payloadLength} bytes of payload
     * lie at {@code payloadOffset} of the direct {@code payload} (only where the batch {@link #gathers()}).
     */
    void commitGathered(int ip, int port, int length, int headerLength, ByteBuffer payload, int payloadOffset,
                        int payloadLength) {
        commit(ip, port, length);
        headerLengths[count - 1] = headerLength;
        payloads[count - 1] = payload;
        payloadOffsets[count - 1] = payloadOffset;
        payloadLengths[count - 1] = payloadLength;
        gathered++;
    }

    /** Sends (through the drain) whatever names a payload in place, before that memory changes. */
    void releaseReferences() {
        if (gathered == 0) {
            return;
        }
        if (drain == null) {
            throw new IllegalStateException("a gathering output batch needs a drain before ring memory is reused");
        }
        drain.drain(this);
    }

    /** The memory of every slot: datagram {@code i} starts at {@link #offset(int)} in it. */
    public ByteBuffer block() {
        return block;
    }

    /** Where datagram {@code i} starts in {@link #block()}. */
    public int offset(int i) {
        return i * MAX_DATAGRAM;
    }

    /** 0 if datagram {@code i} lies whole in its slot; else its slot holds this many bytes of headers, then the ICRC. */
    public int headerLength(int i) {
        return headerLengths[i];
    }

    /** The memory of datagram {@code i}'s payload, where {@link #headerLength(int)} is not 0; it starts at {@link #payloadOffset(int)}. */
    public ByteBuffer payload(int i) {
        return payloads[i];
    }

    public int payloadOffset(int i) {
        return payloadOffsets[i];
    }

    public int payloadLength(int i) {
        return payloadLengths[i];
    }

    /** Copies datagram {@code i} whole, however it lies, into {@code dst[0, length(i))}. */
    public void copyDatagram(int i, byte[] dst) {
        int headers = headerLengths[i];
        if (headers == 0) {
            buffers[i].get(0, dst, 0, lengths[i]);
            return;
        }
        int payload = payloadLengths[i];
        buffers[i].get(0, dst, 0, headers);
        payloads[i].get(payloadOffsets[i], dst, headers, payload);
        buffers[i].get(headers, dst, headers + payload, lengths[i] - headers - payload);
    }

    /** Datagram {@code i}: its bytes are [0, {@link #length(int)}) of this buffer (where it lies whole in its slot). */
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
