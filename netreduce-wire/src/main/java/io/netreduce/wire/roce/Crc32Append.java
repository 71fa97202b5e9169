package io.netreduce.wire.roce;

import java.util.Arrays;

/**
 * CRC-32 of a concatenation from the CRCs of its parts, as zlib's {@code crc32_combine}:
 * {@code crc(A || B) = crc(A) · x^(8·|B|) mod P  xor  crc(B)}. The product by the fixed
 * {@code x^(8·|B|)} is linear in {@code crc(A)}, so for each length it is four lookups in a
 * table built once for that length; a datapath that sends one payload behind several headers
 * (the switch's result to every rank of a ring) takes the payload's CRC once and each
 * header's, instead of the whole datagram's once per header.
 *
 * <p>Keeps tables for the last {@link #LENGTHS} payload lengths it saw (a ring's packets
 * have a few lengths: the path MTU, and its messages' last packets); building one costs
 * 32 polynomial products and 1,024 XORs. Not thread-safe.
 */
public final class Crc32Append {
    /** Payload lengths whose tables are kept. */
    static final int LENGTHS = 8;
    /** CRC-32's polynomial, bit-reflected (as {@code java.util.zip.CRC32} computes it). */
    private static final int POLY = 0xEDB88320;
    /** x^0, bit-reflected. */
    private static final int ONE = 1 << 31;

    private final int[] lengths = new int[LENGTHS];
    private final int[][] tables = new int[LENGTHS][];
    private int next;

    public Crc32Append() {
        Arrays.fill(lengths, -1);
    }

    /**
     * The CRC-32 of {@code A || B} from {@code crcA} (of A, as {@code CRC32.getValue()} gives
     * it) and {@code crcB} (of B alone), where B is {@code lengthB} bytes long.
     */
    public int append(int crcA, int crcB, int lengthB) {
        int[] t = table(lengthB);
        return t[crcA & 0xFF] ^ t[256 + (crcA >>> 8 & 0xFF)] ^ t[512 + (crcA >>> 16 & 0xFF)] ^ t[768 + (crcA >>> 24)]
                ^ crcB;
    }

    private int[] table(int length) {
        for (int i = 0; i < LENGTHS; i++) {
            if (lengths[i] == length) {
                return tables[i];
            }
        }
        int i = next;
        next = (next + 1) % LENGTHS;
        lengths[i] = length;
        tables[i] = build(length);
        return tables[i];
    }

    /**
     * The product by x^(8·length) of every byte value in each of the four byte positions:
     * the 32 single-bit products, then every byte value as the XOR of its bits' products.
     */
    static int[] build(int length) {
        int shift = xPower8(length);
        int[] t = new int[1024];
        for (int k = 0; k < 4; k++) {
            for (int bit = 0; bit < 8; bit++) {
                t[256 * k + (1 << bit)] = multiply(shift, 1 << (8 * k + bit));
            }
            for (int v = 1; v < 256; v++) {
                int low = v & -v;
                if (v != low) {
                    t[256 * k + v] = t[256 * k + (v ^ low)] ^ t[256 * k + low];
                }
            }
        }
        return t;
    }

    /** x^(8·n) mod P, bit-reflected: the square-and-multiply of zlib's {@code x2nmodp(n, 3)}. */
    static int xPower8(long n) {
        int p = ONE;
        int square = 1 << 23; // x^8, bit-reflected
        while (n != 0) {
            if ((n & 1) != 0) {
                p = multiply(square, p);
            }
            square = multiply(square, square);
            n >>>= 1;
        }
        return p;
    }

    /** a · b mod P over bit-reflected polynomials (zlib's {@code multmodp}). */
    static int multiply(int a, int b) {
        int p = 0;
        for (int m = ONE; m != 0; m >>>= 1) {
            if ((a & m) != 0) {
                p ^= b;
            }
            b = (b & 1) != 0 ? (b >>> 1) ^ POLY : b >>> 1;
        }
        return p;
    }
}
