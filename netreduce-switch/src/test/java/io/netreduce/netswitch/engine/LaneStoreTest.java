package io.netreduce.netswitch.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The lane store's sums equal adding the ranks' lanes in rank order, bit for bit, in either
 * byte order, whether the packets come in one reused buffer (as a data plane's receive
 * buffer) or each in its own, at any offset.
 */
class LaneStoreTest {
    private static final int MTU = 1024;
    private static final int RANKS = 4;

    @ParameterizedTest(name = "{0} {1}, lanes at offset {2}, one buffer: {3}")
    @CsvSource({
        "fp32, LITTLE_ENDIAN, 28, true", "fp32, BIG_ENDIAN, 28, true", "fp32, LITTLE_ENDIAN, 29, true",
        "fp32, BIG_ENDIAN, 28, false", "int32, LITTLE_ENDIAN, 12, true", "int32, BIG_ENDIAN, 13, true",
        "int32, BIG_ENDIAN, 12, false"
    })
    void sumsEqualRankOrderAdditionWhicheverWayTheLanesCameIn(String dtype, String orderName, int offset,
                                                              boolean oneBuffer) {
        ByteOrder order = orderName.equals("BIG_ENDIAN") ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
        long seed = System.nanoTime();
        System.out.println("LaneStoreTest seed " + seed);
        Random rnd = new Random(seed);
        boolean fp32 = dtype.equals("fp32");
        LaneStore lanes = fp32 ? new LaneStore.Fp32(2 * (RANKS + 1), MTU, order, 2 * MTU)
                : new LaneStore.Int32(2 * (RANKS + 1), MTU, order, 2 * MTU);
        ByteBuffer shared = ByteBuffer.allocateDirect(offset + MTU + 64);
        for (int packet = 0; packet < 2; packet++) {
            int bytes = packet == 0 ? MTU : MTU - 4 * (1 + rnd.nextInt(100));
            byte[][] payloads = new byte[RANKS][bytes];
            for (int r = 0; r < RANKS; r++) {
                for (int i = 0; i < bytes; i += 4) {
                    ByteBuffer.wrap(payloads[r], i, 4).order(order).putInt(i, fp32
                            ? Float.floatToRawIntBits((float) rnd.nextGaussian() * (1 << rnd.nextInt(20)))
                            : rnd.nextInt());
                }
                ByteBuffer src = oneBuffer ? shared : ByteBuffer.allocateDirect(offset + bytes);
                src.put(offset, payloads[r], 0, bytes);
                lanes.store(src, offset, bytes, packet * (RANKS + 1) + r);
            }
            lanes.sum(packet * (RANKS + 1), RANKS, bytes, packet * MTU);
            byte[] expected = new byte[bytes];
            ByteBuffer e = ByteBuffer.wrap(expected).order(order);
            for (int i = 0; i < bytes; i += 4) {
                if (fp32) {
                    float acc = lane(payloads[0], order).getFloat(i);
                    for (int r = 1; r < RANKS; r++) {
                        acc += lane(payloads[r], order).getFloat(i);
                    }
                    e.putFloat(i, acc);
                } else {
                    int acc = 0;
                    for (int r = 0; r < RANKS; r++) {
                        acc += lane(payloads[r], order).getInt(i);
                    }
                    e.putInt(i, acc);
                }
            }
            byte[] got = new byte[bytes];
            lanes.results().get(packet * MTU, got, 0, bytes);
            assertArrayEquals(expected, got, "packet " + packet + " (seed " + seed + ")");
        }
    }

    private static ByteBuffer lane(byte[] payload, ByteOrder order) {
        return ByteBuffer.wrap(payload).order(order);
    }
}
