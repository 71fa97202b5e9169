package io.netreduce.verbs.disni;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Decides, before any DiSNI class touches native code, whether real RDMA can work here and
 * if not, says exactly what is missing and how to fix it. DiSNI itself would fail later and
 * obscurely: its native dispatcher calls {@code System.loadLibrary("disni")} in a static
 * initializer (an {@link UnsatisfiedLinkError} once, {@link NoClassDefFoundError} ever
 * after), and registration of a direct buffer needs {@code sun.nio.ch} exported to it.
 */
final class DisniAvailability {
    /** Set to {@code false} to turn the provider off even where it could run. */
    static final String ENABLED_PROPERTY = "netreduce.disni.enabled";
    static final String SYS_INFINIBAND = "/sys/class/infiniband";
    static final String FIX_HINT = " (see native/README.md)";

    private static volatile String cached;
    private static volatile boolean checked;

    private DisniAvailability() {
    }

    /** What the facts of this machine say; computed once per JVM (loading a library is not undoable). */
    static String unavailableReason() {
        if (!checked) {
            synchronized (DisniAvailability.class) {
                if (!checked) {
                    cached = reason(System.getProperty(ENABLED_PROPERTY, "true"), classesPresent(), loadLibrary(),
                            System.getProperty("java.library.path", ""), rdmaDevices(Path.of(SYS_INFINIBAND)),
                            sunNioChExported());
                    checked = true;
                }
            }
        }
        return cached;
    }

    /**
     * The decision as a pure function of the facts, so that every branch is testable on a
     * machine without RDMA. Null means "available".
     *
     * @param enabled       value of {@value #ENABLED_PROPERTY}
     * @param classesFound  whether the DiSNI jar is on the class path
     * @param libraryError  why {@code System.loadLibrary("disni")} failed, or null if it loaded
     * @param libraryPath   the java.library.path searched
     * @param devices       RDMA devices found (names under /sys/class/infiniband), null if that directory is missing
     * @param exported      whether java.base exports sun.nio.ch to DiSNI
     */
    static String reason(String enabled, boolean classesFound, Throwable libraryError, String libraryPath,
                         List<String> devices, boolean exported) {
        if ("false".equalsIgnoreCase(enabled)) {
            return "disabled by -D" + ENABLED_PROPERTY + "=false";
        }
        if (!classesFound) {
            return "the DiSNI jar (com.ibm.disni:disni) is not on the class path" + FIX_HINT;
        }
        if (libraryError != null) {
            String detail = String.valueOf(libraryError.getMessage());
            if (detail.contains("no disni in java.library.path") || detail.contains("disni")
                    && !detail.contains("libibverbs") && !detail.contains("librdmacm")) {
                return "native library libdisni.so not found on java.library.path [" + libraryPath
                        + "]: build and install DiSNI's native library (needs rdma-core's libibverbs and librdmacm) "
                        + "and pass -Djava.library.path=<its directory> or set LD_LIBRARY_PATH" + FIX_HINT
                        + "; loader said: " + detail;
            }
            return "libdisni.so could not be loaded: " + detail + " — install rdma-core (libibverbs1, librdmacm1)"
                    + FIX_HINT;
        }
        if (devices == null || devices.isEmpty()) {
            return "no RDMA device: " + SYS_INFINIBAND + (devices == null ? " does not exist" : " is empty")
                    + "; install rdma-core and load your NIC's RDMA driver, or create a Soft-RoCE device with "
                    + "'rdma link add rxe0 type rxe netdev <interface>'" + FIX_HINT;
        }
        if (!exported) {
            return "DiSNI needs sun.nio.ch: start the JVM with --add-exports java.base/sun.nio.ch=ALL-UNNAMED" + FIX_HINT;
        }
        return null;
    }

    private static boolean classesPresent() {
        try {
            Class.forName("com.ibm.disni.verbs.RdmaProvider", false, DisniAvailability.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** Loads libdisni into this class loader (DiSNI's own later load then finds it loaded). */
    private static Throwable loadLibrary() {
        try {
            System.loadLibrary("disni");
            return null;
        } catch (UnsatisfiedLinkError | SecurityException e) {
            return e;
        }
    }

    static List<String> rdmaDevices(Path dir) {
        if (!Files.isDirectory(dir)) {
            return null;
        }
        List<String> names = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.forEach(p -> names.add(p.getFileName().toString()));
        } catch (IOException e) {
            return names;
        }
        return names;
    }

    private static boolean sunNioChExported() {
        Module base = Object.class.getModule();
        try {
            Module disni = Class.forName("com.ibm.disni.util.MemoryUtils", false,
                    DisniAvailability.class.getClassLoader()).getModule();
            return base.isExported("sun.nio.ch", disni);
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
