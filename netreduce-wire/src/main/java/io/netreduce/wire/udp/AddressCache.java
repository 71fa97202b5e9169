package io.netreduce.wire.udp;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * The native addresses of the last few direct buffers asked for, looked up again ({@link
 * NativeUdp#address}, a JNI call) only when a buffer not among them comes: on a datapath the
 * same few buffers come again and again, in turn (the switch verifies a datagram in its
 * receive area, then takes the CRC of a sum in a ring's results; a queue pair's ICRCs
 * alternate between registered memory sent and the receive buffer). Not thread-safe.
 */
public final class AddressCache {
    /** Buffers remembered: enough for the ones a datapath alternates between. */
    private static final int ENTRIES = 4;
    private final ByteBuffer[] buffers = new ByteBuffer[ENTRIES];
    private final long[] addresses = new long[ENTRIES];
    /** The entry a new buffer replaces next, in turn. */
    private int next;

    public long of(ByteBuffer direct) {
        Objects.requireNonNull(direct, "buffer"); // an empty entry must never match
        for (int i = 0; i < ENTRIES; i++) {
            if (buffers[i] == direct) {
                return addresses[i];
            }
        }
        int i = next;
        next = (next + 1) % ENTRIES;
        addresses[i] = NativeUdp.address(direct);
        buffers[i] = direct;
        return addresses[i];
    }
}
