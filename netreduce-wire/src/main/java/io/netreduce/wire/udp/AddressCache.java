package io.netreduce.wire.udp;

import java.nio.ByteBuffer;

/**
 * The native address of the direct buffer asked for last, looked up again ({@link
 * NativeUdp#address}, a JNI call) only when another buffer comes: on a datapath the same
 * buffers come again and again (a receive area, a ring's results). Not thread-safe.
 */
public final class AddressCache {
    private ByteBuffer last;
    private long address;

    public long of(ByteBuffer direct) {
        if (direct != last) {
            address = NativeUdp.address(direct);
            last = direct;
        }
        return address;
    }
}
