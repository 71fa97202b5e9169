package io.netreduce.wire.roce;

import java.nio.ByteBuffer;

/** Flyweight over an RDMA Extended Transport Header (16 bytes): VA, R_Key, DMA length. */
public final class Reth {
    public static final int LENGTH = 16;
    public static final int VIRTUAL_ADDRESS_OFFSET = 0;
    public static final int RKEY_OFFSET = 8;
    public static final int DMA_LENGTH_OFFSET = 12;

    private ByteBuffer buffer;
    private int offset;

    public Reth wrap(ByteBuffer buffer, int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public long virtualAddress() {
        return buffer.getLong(offset + VIRTUAL_ADDRESS_OFFSET);
    }

    public int rkey() {
        return buffer.getInt(offset + RKEY_OFFSET);
    }

    /** Length of the whole message, not of this packet. */
    public int dmaLength() {
        return buffer.getInt(offset + DMA_LENGTH_OFFSET);
    }

    public Reth set(long virtualAddress, int rkey, int dmaLength) {
        buffer.putLong(offset + VIRTUAL_ADDRESS_OFFSET, virtualAddress);
        buffer.putInt(offset + RKEY_OFFSET, rkey);
        buffer.putInt(offset + DMA_LENGTH_OFFSET, dmaLength);
        return this;
    }
}
