package io.netreduce.collectives.algorithm.kernel;

import io.netreduce.collectives.RankJvmOptions;
import io.netreduce.collectives.ReduceOp;
import io.netreduce.wire.ina.InaHeader;
import io.netreduce.wire.udp.NativeUdp;
import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hosts' inner loop: {@code out[i] = received[i] op local[i]} over float32 elements of
 * direct buffers (for the ring: its staging ring, the input tensor and the output tensor of
 * one operation; for shared memory: the peers' segments). At P = 2 the ring's this sum is about a tenth of an all-reduce's CPU and sits on its
 * critical path (each summed message is forwarded next), so its speed shows directly in
 * busbw.
 *
 * <p>Two Java implementations: {@link VectorReductionKernel} uses the JDK's Vector API and
 * runs about twice as fast as the other, but that API is an incubator module in Java 17,
 * present only when the JVM was started with {@code --add-modules jdk.incubator.vector};
 * otherwise {@link ArrayReductionKernel} sums through small heap arrays, the one loop shape
 * C2 vectorises by itself. Where the native library is loaded, {@link NativeReductionKernel}
 * adds in C, about twice as fast again on data in cache, and leaves MAX and MIN to the Java
 * one. All give the same bits: each element is one IEEE operation on the same two operands
 * (of a sum of two NaNs, either payload, as IEEE 754 allows).
 *
 * <p>One instance per user (it keeps per-operation views and scratch blocks); not
 * thread-safe.
 */
public abstract class ReductionKernel {
    static final String VECTOR_MODULE = RankJvmOptions.VECTOR_MODULE;
    /** System property: {@code false} keeps the array kernel even where the module is present. */
    static final String VECTOR_PROPERTY = "netreduce.vectorSum";
    /** System property: {@code false} keeps sums in Java even where the native library is loaded. */
    static final String NATIVE_PROPERTY = "netreduce.nativeSum";
    private static final Logger LOG = LoggerFactory.getLogger(ReductionKernel.class);

    /**
     * The choice, made once. A holder of its own rather than a static field of this class:
     * making it loads {@link VectorReductionKernel}, whose initialisation needs this class
     * initialised first, so it must not run inside this class's own initialiser.
     */
    private static final class Choice {
        static final boolean NATIVE = nativeUsable(System.getProperty(NATIVE_PROPERTY), NativeUdp.available(),
                ByteOrder.nativeOrder() == InaHeader.PAYLOAD_ORDER);
        static final boolean VECTOR = vectorUsable(System.getProperty(VECTOR_PROPERTY),
                ModuleLayer.boot().findModule(VECTOR_MODULE).isPresent(), c2Problem());
    }

    /** The fastest kernel this JVM can run. */
    public static ReductionKernel create() {
        return Choice.NATIVE ? new NativeReductionKernel(javaKernel()) : javaKernel();
    }

    private static ReductionKernel javaKernel() {
        return Choice.VECTOR ? new VectorReductionKernel() : new ArrayReductionKernel();
    }

    /** True if sums run in the native library ({@link NativeReductionKernel}). */
    public static boolean nativeAvailable() {
        return Choice.NATIVE;
    }

    /**
     * Whether to sum in the native library, given the property's value (null if unset),
     * whether the library is loaded, and whether the machine's byte order is the payload's.
     */
    static boolean nativeUsable(String property, boolean loaded, boolean payloadOrderIsNative) {
        boolean use = (property == null || Boolean.parseBoolean(property)) && loaded && payloadOrderIsNative;
        LOG.debug("float sums {}", use ? "in the native library" : "in Java ("
                + (!loaded ? NativeUdp.unavailableReason() : !payloadOrderIsNative ? "big-endian machine"
                : NATIVE_PROPERTY + "=false") + ")");
        return use;
    }

    /**
     * True if the Vector API module is in this JVM's boot layer, C2 compiles it, its kernel
     * loads and {@value #VECTOR_PROPERTY} is not {@code false}.
     */
    public static boolean vectorAvailable() {
        return Choice.VECTOR;
    }

    /**
     * Why HotSpot's C2, the compiler that turns Vector API calls into SIMD instructions,
     * will not compile the kernel here, or null if it will (or this is not a HotSpot VM we
     * can ask). Without C2 every vector operation is a boxed object: measured with C1
     * alone, 185 ms per 32 MiB against 11 ms through heap arrays.
     */
    static String c2Problem() {
        if (System.getProperty("java.vm.info", "").contains("interpreted")) {
            return "the JVM runs interpreted only (-Xint)";
        }
        try {
            var vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            if (vm == null) {
                return null;
            }
            if (Boolean.parseBoolean(option(vm, "UseJVMCICompiler", "false"))) {
                return "a JVMCI compiler (Graal) replaces C2";
            }
            if (Boolean.parseBoolean(option(vm, "TieredCompilation", "true"))
                    && Integer.parseInt(option(vm, "TieredStopAtLevel", "4")) < 4) {
                return "-XX:TieredStopAtLevel=" + option(vm, "TieredStopAtLevel", "4") + " stops before C2";
            }
            return null;
        } catch (RuntimeException | LinkageError e) {
            return null; // no jdk.management here: assume the usual HotSpot server VM
        }
    }

    private static String option(HotSpotDiagnosticMXBean vm, String name, String absent) {
        try {
            return vm.getVMOption(name).getValue();
        } catch (IllegalArgumentException e) {
            return absent; // this VM has no such option
        }
    }

    /**
     * Whether to sum with the Vector API, given the property's value (null if unset), the
     * module's presence and {@link #c2Problem()}.
     */
    static boolean vectorUsable(String property, boolean modulePresent, String c2Problem) {
        if (property != null && !Boolean.parseBoolean(property)) {
            LOG.debug("float reduction through heap arrays: {}=false", VECTOR_PROPERTY);
            return false;
        }
        if (!modulePresent) {
            // INFO, once per process, where the ring's sum runs at half speed and one JVM option fixes it.
            if (Choice.NATIVE) {
                LOG.debug("MAX and MIN through heap arrays (sums are native): --add-modules {} would vectorise them",
                        VECTOR_MODULE);
            } else {
                LOG.info("ring sums through heap arrays: start the JVM with --add-modules {} for the Vector API sum "
                        + "(about twice as fast)", VECTOR_MODULE);
            }
            return false;
        }
        if (c2Problem != null) {
            LOG.info("ring sums through heap arrays although module {} is present: {}, and the Vector API is "
                    + "many times slower than heap arrays without C2", VECTOR_MODULE, c2Problem);
            return false;
        }
        try {
            LOG.debug("float reduction with the Vector API, {}", VectorReductionKernel.describe());
            return true;
        } catch (LinkageError e) {
            LOG.warn("module {} is present but its kernel does not load ({}); summing through heap arrays",
                    VECTOR_MODULE, e.toString());
            return false;
        }
    }

    /**
     * Binds one operation's buffers: element {@code i} of each is the float32 at byte
     * {@code 4i} in {@link io.netreduce.wire.ina.InaHeader#PAYLOAD_ORDER}. {@code local} and
     * {@code out} are the same buffer for an in-place operation.
     */
    public abstract void bind(ByteBuffer received, ByteBuffer local, ByteBuffer out);

    /**
     * {@code out[o + i] = received[r + i] op local[l + i]} for {@code i < count}; SUM and AVG
     * add (AVG divides once the ring is done).
     */
    public abstract void apply(ReduceOp op, int r, int l, int o, int count);
}
