package io.netreduce.wire.roce;

import java.nio.ByteBuffer;

/** Flyweight over the Immediate Data header (4 opaque bytes, big-endian on the wire). */
public final class ImmDt {
    public static final int LENGTH = 4;

    private ByteBuffer buffer;
    private int offset;

    public ImmDt wrap(ByteBuffer buffer, int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public int value() {
        return buffer.getInt(offset);
    }

    public ImmDt value(int imm) {
        buffer.putInt(offset, imm);
        return this;
    }
}
