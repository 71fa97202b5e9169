package io.netreduce.netswitch.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Element-wise sums of P rank buffers held side by side in one byte array. Every lane is
 * summed in rank order, ((r0 + r1) + r2) + ..., so every run and every rank sees the same
 * bits. Byte-array view handles read and write 4-byte lanes in place (no conversion pass, no
 * allocation); FP32 uses IEEE float addition, INT32 wraps like two's-complement hardware.
 */
final class Lanes {
    private static final VarHandle FLOAT_LE = MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle FLOAT_BE = MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT_BE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

    private Lanes() {
    }

    /**
     * Sums {@code ranks} buffers of {@code bytes} bytes starting at {@code first} and
     * {@code stride} bytes apart into the buffer at {@code result}.
     */
    static void sum(byte[] a, int first, int stride, int ranks, int result, int bytes, boolean fp32, boolean littleEndian) {
        if (fp32) {
            if (littleEndian) {
                sumFloatLe(a, first, stride, ranks, result, bytes);
            } else {
                sumFloatBe(a, first, stride, ranks, result, bytes);
            }
        } else {
            if (littleEndian) {
                sumIntLe(a, first, stride, ranks, result, bytes);
            } else {
                sumIntBe(a, first, stride, ranks, result, bytes);
            }
        }
    }

    private static void sumFloatLe(byte[] a, int first, int stride, int ranks, int result, int bytes) {
        for (int i = 0; i < bytes; i += 4) {
            int at = first + i;
            float acc = (float) FLOAT_LE.get(a, at);
            for (int r = 1; r < ranks; r++) {
                at += stride;
                acc += (float) FLOAT_LE.get(a, at);
            }
            FLOAT_LE.set(a, result + i, acc);
        }
    }

    private static void sumFloatBe(byte[] a, int first, int stride, int ranks, int result, int bytes) {
        for (int i = 0; i < bytes; i += 4) {
            int at = first + i;
            float acc = (float) FLOAT_BE.get(a, at);
            for (int r = 1; r < ranks; r++) {
                at += stride;
                acc += (float) FLOAT_BE.get(a, at);
            }
            FLOAT_BE.set(a, result + i, acc);
        }
    }

    private static void sumIntLe(byte[] a, int first, int stride, int ranks, int result, int bytes) {
        for (int i = 0; i < bytes; i += 4) {
            int at = first + i;
            int acc = (int) INT_LE.get(a, at);
            for (int r = 1; r < ranks; r++) {
                at += stride;
                acc += (int) INT_LE.get(a, at);
            }
            INT_LE.set(a, result + i, acc);
        }
    }

    private static void sumIntBe(byte[] a, int first, int stride, int ranks, int result, int bytes) {
        for (int i = 0; i < bytes; i += 4) {
            int at = first + i;
            int acc = (int) INT_BE.get(a, at);
            for (int r = 1; r < ranks; r++) {
                at += stride;
                acc += (int) INT_BE.get(a, at);
            }
            INT_BE.set(a, result + i, acc);
        }
    }
}
