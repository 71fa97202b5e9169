package io.netreduce.netswitch.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The lane store's sums equal adding the ranks' lanes in rank order, bit for bit, in either
 * byte order, whether the packets come in one reused buffer (as a data plane's receive
 * buffer) or each in its own, at any offset; and while many positions collect at once,
 * their ranks' packets interleaved, through blocks of buffers that positions take and give back.
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
        LaneStore lanes = fp32 ? new LaneStore.Fp32(2, RANKS, MTU, order, 2 * MTU)
                : new LaneStore.Int32(2, RANKS, MTU, order, 2 * MTU);
        ByteBuffer shared = ByteBuffer.allocateDirect(offset + MTU + 64);
        if (oneBuffer) {
            lanes.sourceArea(shared); // as the native data plane declares its receive buffer
        }
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
                lanes.store(packet, r, src, offset, bytes);
            }
            lanes.sum(packet, bytes, packet * MTU);
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

    @Test
    void positionsCollectingAtOnceGetTheirOwnSumsAndGiveTheirBuffersBack() {
        long seed = System.nanoTime();
        System.out.println("LaneStoreTest interleaved seed " + seed);
        Random rnd = new Random(seed);
        int positions = 16;
        LaneStore lanes = new LaneStore.Fp32(positions, RANKS, MTU, ByteOrder.LITTLE_ENDIAN, positions * MTU);
        ByteBuffer area = ByteBuffer.allocateDirect(4 * MTU).order(ByteOrder.LITTLE_ENDIAN);
        lanes.sourceArea(area);
        for (int round = 0; round < 3; round++) {
            // Every (position, rank) packet once, in a random order; a position sums when its last rank arrives.
            List<int[]> arrivals = new ArrayList<>();
            for (int p = 0; p < positions; p++) {
                for (int r = 0; r < RANKS; r++) {
                    arrivals.add(new int[] {p, r});
                }
            }
            Collections.shuffle(arrivals, rnd);
            float[][][] sent = new float[positions][RANKS][MTU / 4];
            int[] arrived = new int[positions];
            for (int[] a : arrivals) {
                int p = a[0];
                int r = a[1];
                int at = 4 * rnd.nextInt(3 * MTU / 4); // anywhere in the area, 4-byte aligned
                for (int i = 0; i < MTU / 4; i++) {
                    sent[p][r][i] = (float) rnd.nextGaussian();
                    area.putFloat(at + 4 * i, sent[p][r][i]);
                }
                lanes.store(p, r, area, at, MTU);
                if (++arrived[p] == RANKS) {
                    lanes.sum(p, MTU, p * MTU);
                    for (int i = 0; i < MTU / 4; i++) {
                        float acc = sent[p][0][i];
                        for (int k = 1; k < RANKS; k++) {
                            acc += sent[p][k][i];
                        }
                        assertEquals(Float.floatToRawIntBits(acc),
                                Float.floatToRawIntBits(lanes.results().getFloat(p * MTU + 4 * i)),
                                "position " + p + " lane " + i + " (seed " + seed + ")");
                    }
                }
            }
            assertEquals(0, lanes.blocksInUse(), "every summed position gave its block back");
        }
    }

    private static ByteBuffer lane(byte[] payload, ByteOrder order) {
        return ByteBuffer.wrap(payload).order(order);
    }
}
