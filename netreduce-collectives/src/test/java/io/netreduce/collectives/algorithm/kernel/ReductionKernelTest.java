package io.netreduce.collectives.algorithm.kernel;

import io.netreduce.wire.ina.InaHeader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.collectives.RankJvmOptions;
import io.netreduce.collectives.ReduceOp;
import io.netreduce.wire.udp.NativeUdp;
import io.netreduce.collectives.algorithm.MessagePlan;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import java.util.stream.Stream;

/**
 * Both reduction kernels against a scalar reference, bit for bit: every operation, in place
 * and out of place, at odd offsets and lengths that leave a tail after the last full
 * vector, over values that include NaN, signed zeros and infinities (where MAX and MIN have
 * rules of their own). The test JVM has the Vector API module (see this module's POM), so
 * both kernels run here.
 */
class ReductionKernelTest {
    private static final long SEED = Long.getLong("netreduce.test.seed", System.nanoTime());
    private static final float[] SPECIAL = {Float.NaN, 0.0f, -0.0f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY,
            Float.MIN_VALUE, -Float.MAX_VALUE, 1.0f, -1.0f};

    private static final ReduceOp[] OPS = ReduceOp.values();

    static Stream<Arguments> kernels() {
        return Stream.of(Arguments.of("array", (Supplier<ReductionKernel>) ArrayReductionKernel::new),
                Arguments.of("vector", (Supplier<ReductionKernel>) VectorReductionKernel::new),
                Arguments.of("native", (Supplier<ReductionKernel>) () -> new NativeReductionKernel(new VectorReductionKernel())));
    }

    @Test
    void launchersAreToldToAddTheModuleAndWhichNoticeToDrop() {
        assertEquals(java.util.List.of("--add-modules=" + RankJvmOptions.VECTOR_MODULE), RankJvmOptions.recommended(),
                "this runtime has the module");
        assertTrue(RankJvmOptions.isStartupNotice("WARNING: Using incubator modules: jdk.incubator.vector"));
        assertFalse(RankJvmOptions.isStartupNotice("WARNING: Using incubator modules: jdk.incubator.foreign"));
        assertFalse(RankJvmOptions.isStartupNotice("[rank 0] WARNING: Using incubator modules: jdk.incubator.vector"));
    }

    @Test
    void theVectorKernelIsChosenWhereTheModuleIsPresentAndTheNativeOneWhereTheLibraryIs() {
        assertTrue(ReductionKernel.vectorAvailable(), "the test JVM is started with --add-modules "
                + ReductionKernel.VECTOR_MODULE);
        assertEquals(NativeUdp.available() ? NativeReductionKernel.class : VectorReductionKernel.class,
                ReductionKernel.create().getClass());
        if ("true".equals(System.getenv("CI"))) {
            assertTrue(ReductionKernel.nativeAvailable(), "CI builds the native library: " + NativeUdp.describe());
        }
        assertTrue(ReductionKernel.nativeUsable(null, true, true));
        assertFalse(ReductionKernel.nativeUsable("false", true, true));
        assertFalse(ReductionKernel.nativeUsable(null, false, true));
        assertFalse(ReductionKernel.nativeUsable(null, true, false));
    }

    /**
     * In a fresh JVM, making a vector kernel before anything asked for the choice: the
     * choice must not be made inside ReductionKernel's own initialiser, which this order
     * would enter half-way through VectorReductionKernel's (it once failed so, in JMH).
     */
    @Test
    void aVectorKernelCanBeMadeFirstInAFreshJvm() throws Exception {
        String out = runFirstUse();
        assertTrue(out.contains("sum 3.0, vector chosen true"), out);
        // The JVM's notice is exactly the line launchers drop.
        assertTrue(out.lines().anyMatch(RankJvmOptions::isStartupNotice), out);
    }

    /** Without C2 the Vector API boxes every operation: a JVM stopped at C1 keeps the array kernel, and says why. */
    @Test
    void aJvmWithoutC2KeepsTheArrayKernel() throws Exception {
        String out = runFirstUse("-XX:TieredStopAtLevel=1");
        assertTrue(out.contains("vector chosen false"), out);
        assertTrue(out.contains("TieredStopAtLevel=1"), out);
    }

    private static String runFirstUse(String... jvmOptions) throws Exception {
        java.util.List<String> cmd = new java.util.ArrayList<>(java.util.List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(RankJvmOptions.recommended());
        cmd.addAll(java.util.List.of(jvmOptions));
        cmd.addAll(java.util.List.of("-cp", System.getProperty("java.class.path"), FirstUse.class.getName()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the child JVM did not finish within 60 s");
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.exitValue(), out);
            return out;
        } finally {
            p.destroyForcibly();
        }
    }

    /** The child of {@link #aVectorKernelCanBeMadeFirstInAFreshJvm}. */
    public static final class FirstUse {
        public static void main(String[] args) {
            ByteBuffer a = ByteBuffer.allocateDirect(64).order(InaHeader.PAYLOAD_ORDER).putFloat(0, 1f);
            ByteBuffer b = ByteBuffer.allocateDirect(64).order(InaHeader.PAYLOAD_ORDER).putFloat(0, 2f);
            ReductionKernel kernel = new VectorReductionKernel();
            kernel.bind(a, b, b);
            kernel.apply(ReduceOp.SUM, 0, 0, 0, 16);
            System.out.println("sum " + b.getFloat(0) + ", vector chosen " + ReductionKernel.vectorAvailable()
                    + ", C2: " + ReductionKernel.c2Problem());
        }
    }

    @Test
    void thePropertyOrAMissingModuleKeepsTheArrayKernel() {
        assertTrue(ReductionKernel.vectorUsable(null, true, null));
        assertTrue(ReductionKernel.vectorUsable("true", true, null));
        assertFalse(ReductionKernel.vectorUsable("false", true, null));
        assertFalse(ReductionKernel.vectorUsable(null, false, null));
        assertFalse(ReductionKernel.vectorUsable("true", false, null));
        assertFalse(ReductionKernel.vectorUsable(null, true, "no C2"));
        assertEquals(null, ReductionKernel.c2Problem(), "the test JVM runs C2");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kernels")
    void matchesTheScalarReferenceBitForBit(String name, Supplier<ReductionKernel> factory) {
        Random random = new Random(SEED);
        int[] counts = {0, 1, 7, 15, 16, 17, 63, 4095, 4096, 4097, 10_000};
        for (ReduceOp op : ReduceOp.values()) {
            for (int count : counts) {
                for (boolean inPlace : new boolean[] {true, false}) {
                    int offset = random.nextInt(3) * 2; // a region offset need not be 4-aligned
                    int r = random.nextInt(40);
                    int l = random.nextInt(40);
                    ByteBuffer received = elements(filled(random, r + count), 0);
                    ByteBuffer local = elements(filled(random, offset / 4 + l + count + 1), offset);
                    ByteBuffer out = inPlace ? local : elements(filled(random, l + count), 0);
                    float[] expected = new float[count];
                    for (int i = 0; i < count; i++) {
                        expected[i] = reference(op, received.getFloat(4 * (r + i)), local.getFloat(4 * (l + i)));
                    }
                    float before = inPlace ? 0 : out.getFloat(0);
                    ReductionKernel kernel = factory.get();
                    kernel.bind(received, local, out);
                    kernel.apply(op, r, l, l, count);
                    for (int i = 0; i < count; i++) {
                        int got = Float.floatToRawIntBits(out.getFloat(4 * (l + i)));
                        int want = Float.floatToRawIntBits(expected[i]);
                        if (Float.isNaN(expected[i]) ? !Float.isNaN(out.getFloat(4 * (l + i))) : got != want) {
                            throw new AssertionError(name + " " + op + " count " + count + (inPlace ? " in place" : "")
                                    + ": element " + i + " is " + out.getFloat(4 * (l + i)) + ", expected "
                                    + expected[i] + " (seed " + SEED + ")");
                        }
                    }
                    if (!inPlace && l > 0) {
                        assertEquals(before, out.getFloat(0), "wrote before the range (seed " + SEED + ")");
                    }
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kernels")
    void allocatesNothingOnceCompiled(String name, Supplier<ReductionKernel> factory) {
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Random random = new Random(SEED);
        ByteBuffer received = elements(filled(random, 8192), 0);
        ByteBuffer local = elements(filled(random, 8192), 0);
        ReductionKernel kernel = factory.get();
        kernel.bind(received, local, local);
        long bytes = Long.MAX_VALUE;
        // Allocation stops once C2 has compiled (and for the vector kernel, intrinsified) the
        // loops: warm up in rounds until a measured round allocates nothing, or give up.
        for (int round = 0; round < 40 && bytes > 0; round++) {
            for (int i = 0; i < 2000; i++) {
                kernel.apply(OPS[i % OPS.length], i % 7, 0, 0, 4096 + i % 17);
            }
            long start = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 1000; i++) {
                kernel.apply(OPS[i % OPS.length], i % 7, 0, 0, 4096 + i % 17);
            }
            bytes = threads.getCurrentThreadAllocatedBytes() - start;
        }
        assertEquals(0, bytes, name + " kernel: bytes allocated by 1,000 reductions once compiled");
    }

    private static float reference(ReduceOp op, float received, float local) {
        return switch (op) {
            case MAX -> Math.max(received, local);
            case MIN -> Math.min(received, local);
            default -> received + local;
        };
    }

    private static ByteBuffer filled(Random random, int floats) {
        ByteBuffer b = ByteBuffer.allocateDirect(4 * floats + 8).order(InaHeader.PAYLOAD_ORDER);
        for (int i = 0; i < floats + 2; i++) {
            b.putFloat(4 * i, random.nextInt(8) == 0 ? SPECIAL[random.nextInt(SPECIAL.length)]
                    : (float) random.nextGaussian() * 100);
        }
        return b;
    }

    /** As the ring views a region: float element i at byte 4i from {@code byteOffset}. */
    private static ByteBuffer elements(ByteBuffer b, int byteOffset) {
        return b.duplicate().position(byteOffset).slice().order(InaHeader.PAYLOAD_ORDER);
    }
}
