package io.netreduce.wire.roce;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

/** The CRC of a concatenation from its parts' CRCs, against CRC32 over the whole. */
class Crc32AppendTest {
    private static int crc(byte[] b, int from, int to) {
        CRC32 c = new CRC32();
        c.update(b, from, to - from);
        return (int) c.getValue();
    }

    @Test
    void appendsAsCrc32OverTheConcatenation() {
        long seed = 20261202;
        System.out.println("Crc32AppendTest seed " + seed);
        Random rnd = new Random(seed);
        Crc32Append append = new Crc32Append();
        for (int i = 0; i < 3000; i++) {
            // Few lengths at first (table hits), then more than the tables keep (replacement).
            int lengthB = i < 1000 ? new int[] {0, 1, 4096, 1024, 3}[i % 5] : rnd.nextInt(9000);
            int lengthA = rnd.nextInt(200);
            byte[] all = new byte[lengthA + lengthB];
            rnd.nextBytes(all);
            assertEquals(crc(all, 0, all.length),
                    append.append(crc(all, 0, lengthA), crc(all, lengthA, all.length), lengthB),
                    "seed " + seed + " case " + i + ": |A| " + lengthA + ", |B| " + lengthB);
        }
    }

    @Test
    void powersOfXAreThoseOfTheSquareAndMultiply() {
        // x^8 is one byte of zeros: appending it to x^0 by hand, bit by bit.
        int p = 1 << 31;
        for (int bit = 0; bit < 8 * 4096; bit++) {
            p = (p & 1) != 0 ? (p >>> 1) ^ 0xEDB88320 : p >>> 1;
        }
        assertEquals(p, Crc32Append.xPower8(4096));
        assertEquals(1 << 31, Crc32Append.xPower8(0));
    }
}
