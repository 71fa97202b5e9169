package io.netreduce.wire.udp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;

/**
 * Writes the plan of one {@link NativeUdp#send}: runs of datagrams to one destination, each
 * run a list of iovecs in direct memory that the kernel gathers (one GSO super-datagram when
 * the run holds several datagrams). Iovecs that continue the previous one in memory merge
 * into it, so a batch built contiguously in one arena stays one iovec. Flyweight over one
 * direct int buffer, reused from call to call: nothing is allocated per datagram.
 *
 * <p>Layout per run, in ints (the native side reads the same offsets): {@link #IP},
 * {@link #PORT}, {@link #SEGMENT}, {@link #DATAGRAMS}, {@link #IOVECS}, then
 * {@link #IOVEC_INTS} per iovec: address low and high 32 bits, length.
 */
public final class SendPlan {
    static final int IP = 0;
    static final int PORT = 1;
    static final int SEGMENT = 2;
    static final int DATAGRAMS = 3;
    static final int IOVECS = 4;
    static final int RUN_HEADER_INTS = 5;
    static final int IOVEC_INTS = 3;
    /** The kernel's limit on iovecs per message (UIO_MAXIOV). */
    public static final int MAX_IOVECS_PER_RUN = 1024;

    private final IntBuffer ints;
    private int used;
    private int runs;
    /** Where the open run starts, or -1. */
    private int run = -1;
    private long lastEnd;

    /** @param capacityInts the plan's size; {@link #hasRoom} says when it is full */
    public SendPlan(int capacityInts) {
        ints = ByteBuffer.allocateDirect(4 * capacityInts).order(ByteOrder.nativeOrder()).asIntBuffer();
    }

    /** True if a run of up to {@code iovecs} iovecs still fits. */
    public boolean hasRoom(int iovecs) {
        return used + RUN_HEADER_INTS + IOVEC_INTS * iovecs <= ints.capacity();
    }

    /** Opens a run to {@code ip:port} whose datagrams are {@code segment} bytes (the last may be shorter). */
    public void beginRun(int ip, int port, int segment) {
        if (run >= 0) {
            throw new IllegalStateException("the previous run is still open");
        }
        run = used;
        ints.put(run + IP, ip).put(run + PORT, port).put(run + SEGMENT, segment).put(run + IOVECS, 0);
        used += RUN_HEADER_INTS;
        lastEnd = -1;
    }

    /** Appends {@code length} bytes at {@code address} (direct memory alive until the send returns) to the open run. */
    public void iovec(long address, int length) {
        if (length == 0) {
            return;
        }
        int n = ints.get(run + IOVECS);
        if (address == lastEnd) {
            int at = used - IOVEC_INTS;
            ints.put(at + 2, ints.get(at + 2) + length);
        } else {
            if (n == MAX_IOVECS_PER_RUN) {
                throw new IllegalStateException("a run of more than " + MAX_IOVECS_PER_RUN + " iovecs");
            }
            ints.put(used, (int) address).put(used + 1, (int) (address >>> 32)).put(used + 2, length);
            used += IOVEC_INTS;
            ints.put(run + IOVECS, n + 1);
        }
        lastEnd = address + length;
    }

    /**
     * Appends a packet of {@code length} bytes to the open run: whole at {@code at} where
     * {@code headerLength} is 0; else its {@code headerLength} bytes of headers at {@code at}
     * with the rest of its own bytes (pad, ICRC) right after them, and its {@code
     * payloadLength} bytes of payload at {@code payload}, which go between the two.
     */
    public void packet(long at, int length, int headerLength, long payload, int payloadLength) {
        if (headerLength == 0) {
            iovec(at, length);
            return;
        }
        iovec(at, headerLength);
        iovec(payload, payloadLength);
        iovec(at + headerLength, length - headerLength - payloadLength);
    }

    /** Closes the open run, which holds {@code datagrams} datagrams; a run with no bytes is dropped. */
    public void endRun(int datagrams) {
        if (ints.get(run + IOVECS) == 0) {
            used = run;
        } else {
            ints.put(run + DATAGRAMS, datagrams);
            runs++;
        }
        run = -1;
    }

    /** A run of {@code count} datagrams of {@code segment} bytes (the last may be shorter) lying contiguously at {@code address}. */
    public void contiguousRun(int ip, int port, long address, int segment, int count, int bytes) {
        beginRun(ip, port, segment);
        iovec(address, bytes);
        endRun(count);
    }

    public int runs() {
        return runs;
    }

    /** Sends every run through {@code fd} ({@link NativeUdp#send}); the plan stays as it was. */
    public int send(int fd, int timeoutMillis) {
        return NativeUdp.send(fd, ints, runs, timeoutMillis);
    }

    /** Datagrams in runs {@code first .. runs() - 1} (what a send that took {@code first} runs left). */
    public int datagramsFrom(int first) {
        int datagrams = 0;
        int at = 0;
        for (int r = 0; r < runs; r++) {
            if (r >= first) {
                datagrams += ints.get(at + DATAGRAMS);
            }
            at += RUN_HEADER_INTS + IOVEC_INTS * ints.get(at + IOVECS);
        }
        return datagrams;
    }

    public void clear() {
        used = 0;
        runs = 0;
        run = -1;
    }
}
