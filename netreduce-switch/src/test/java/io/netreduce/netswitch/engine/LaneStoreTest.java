package io.netreduce.netswitch.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.wire.udp.NativeUdp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Both lane stores' sums equal adding the ranks' lanes in rank order, bit for bit, whatever
 * order the ranks' packets come in: in either byte order (the Java path), whether the packets
 * come in one reused buffer (as a data plane's receive buffer) or each in its own, direct or
 * on the heap, at any offset; and while many positions collect at once, their ranks' packets
 * interleaved, through blocks of buffers that positions take and give back.
 */
class LaneStoreTest {
    private static final int MTU = 1024;
    private static final int RANKS = 4;

    /** The native path where the library loads (as it must on CI), else the test is skipped and says why. */
    private static LaneStore store(boolean accumulating, boolean fp32, int positions, ByteOrder order) {
        if (accumulating) {
            if ("true".equals(System.getenv("CI"))) {
                assertTrue(NativeUdp.available(), NativeUdp.describe());
            }
            Assumptions.assumeTrue(NativeUdp.available(), NativeUdp.describe());
            return new LaneStore.Accumulating(fp32, positions, RANKS, MTU, positions * MTU);
        }
        return fp32 ? new LaneStore.Fp32(positions, RANKS, MTU, order, positions * MTU)
                : new LaneStore.Int32(positions, RANKS, MTU, order, positions * MTU);
    }

    @ParameterizedTest(name = "{0} {1} {2}, lanes at offset {3}, one buffer: {4}, direct: {5}")
    @CsvSource({
        "staged, fp32, LITTLE_ENDIAN, 28, true, true", "staged, fp32, BIG_ENDIAN, 28, true, true",
        "staged, fp32, LITTLE_ENDIAN, 29, true, true", "staged, fp32, BIG_ENDIAN, 28, false, true",
        "staged, int32, LITTLE_ENDIAN, 12, true, true", "staged, int32, BIG_ENDIAN, 13, true, true",
        "staged, int32, BIG_ENDIAN, 12, false, false",
        "accumulating, fp32, NATIVE, 28, true, true", "accumulating, fp32, NATIVE, 29, true, true",
        "accumulating, fp32, NATIVE, 28, false, false", "accumulating, int32, NATIVE, 12, true, true",
        "accumulating, int32, NATIVE, 13, false, true"
    })
    void sumsEqualRankOrderAdditionWhicheverWayTheLanesCameIn(String path, String dtype, String orderName, int offset,
                                                              boolean oneBuffer, boolean direct) {
        ByteOrder order = orderName.equals("BIG_ENDIAN") ? ByteOrder.BIG_ENDIAN
                : orderName.equals("LITTLE_ENDIAN") ? ByteOrder.LITTLE_ENDIAN : ByteOrder.nativeOrder();
        long seed = System.nanoTime();
        System.out.println("LaneStoreTest seed " + seed);
        Random rnd = new Random(seed);
        boolean fp32 = dtype.equals("fp32");
        LaneStore lanes = store(path.equals("accumulating"), fp32, 2, order);
        ByteBuffer shared = ByteBuffer.allocateDirect(offset + MTU + 64);
        if (oneBuffer) {
            lanes.sourceArea(shared); // as the native data plane declares its receive buffer
        }
        for (int packet = 0; packet < 2; packet++) {
            int bytes = packet == 0 ? MTU : MTU - 4 * (1 + rnd.nextInt(100));
            byte[][] payloads = new byte[RANKS][bytes];
            List<Integer> arrival = new ArrayList<>(List.of(0, 1, 2, 3));
            Collections.shuffle(arrival, rnd);
            for (int r : arrival) {
                for (int i = 0; i < bytes; i += 4) {
                    ByteBuffer.wrap(payloads[r], i, 4).order(order).putInt(i, fp32
                            ? Float.floatToRawIntBits((float) rnd.nextGaussian() * (1 << rnd.nextInt(20)))
                            : rnd.nextInt());
                }
                ByteBuffer src = oneBuffer ? shared
                        : direct ? ByteBuffer.allocateDirect(offset + bytes) : ByteBuffer.allocate(offset + bytes);
                src.put(offset, payloads[r], 0, bytes);
                lanes.store(packet, r, src, offset, bytes, packet * MTU);
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
            assertArrayEquals(expected, got, "packet " + packet + ", ranks came " + arrival + " (seed " + seed + ")");
        }
        assertEquals(0, lanes.blocksInUse(), "every summed position gave its block back");
    }

    @ParameterizedTest(name = "accumulating: {0}")
    @ValueSource(booleans = {false, true})
    void positionsCollectingAtOnceGetTheirOwnSumsAndGiveTheirBuffersBack(boolean accumulating) {
        long seed = System.nanoTime();
        System.out.println("LaneStoreTest interleaved seed " + seed);
        Random rnd = new Random(seed);
        int positions = 16;
        LaneStore lanes = store(accumulating, true, positions, ByteOrder.nativeOrder());
        ByteBuffer area = ByteBuffer.allocateDirect(4 * MTU).order(ByteOrder.nativeOrder());
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
                lanes.store(p, r, area, at, MTU, p * MTU);
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
            // A position claimed again before it was summed gives its block back and starts afresh.
            lanes.store(0, 3, area, 0, MTU, 0);
            lanes.release(0);
            assertEquals(0, lanes.blocksInUse(), "a released position holds nothing");
        }
    }

    private static ByteBuffer lane(byte[] payload, ByteOrder order) {
        return ByteBuffer.wrap(payload).order(order);
    }
}
