package io.netreduce.wire.udp;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Batched UDP I/O in native code ({@code native/udp/netreduce_udp.c}, built by Maven with the
 * machine's gcc and carried in the jar): {@code recvmmsg} with UDP GRO and {@code sendmmsg}
 * with UDP GSO straight between the socket and direct buffers, with no object per datagram;
 * the CRC-32 of ICRCs over direct memory ({@link #crc32}, {@code native/udp/crc32.c}), and
 * float adds ({@code native/udp/lanes.c}): the switch's lanes ({@link #addFloats}) and the
 * hosts' sums ({@link #addFloats3}).
 * Where the library is not in the jar (built without gcc), does not load (not Linux x86-64
 * or aarch64) or is turned off ({@value #ENABLED_PROPERTY}{@code =false}), {@link #available()}
 * is false, {@link #unavailableReason()} says why, and callers keep their pure-Java (Netty)
 * path; {@link #describe()} is the one log line saying which path runs.
 *
 * <p>Receive metadata ({@link #receive}): per message four ints, payload length (negative if
 * the slot was too small and the datagram was cut), source IPv4 address, source port, and
 * the segment size of a GRO super-datagram (its length when the kernel did not coalesce).
 * Send plan ({@link #send}, written with {@link SendPlan}): per run the destination IPv4
 * address and port, the segment size, the run's datagram count, the iovec count n, then n
 * iovecs of (address, length) in direct memory ({@link #address}); the run's bytes are its
 * iovecs in order, and a run of more than one datagram leaves as one GSO super-datagram cut
 * every segment size bytes. So a packet's headers, its payload where it already lies
 * (registered memory, a stored result) and its ICRC can be iovecs of their own: the kernel
 * gathers them, nothing is copied in user space. Errors are negative errno values.
 */
public final class NativeUdp {
    public static final String ENABLED_PROPERTY = "netreduce.native";
    /** Ints of receive metadata per message. */
    public static final int META_INTS = 4;
    /** Most messages one {@link #receive} fills. */
    public static final int MAX_RECEIVE = 256;
    private static final String LIBRARY = "libnetreduce_udp.so";
    private static final String REASON;

    static {
        REASON = load();
    }

    private NativeUdp() {
    }

    /** The resource directory of this platform's library, e.g. {@code linux-amd64}. */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        return (os.contains("linux") ? "linux" : os.replace(' ', '_')) + "-" + arch;
    }

    private static String load() {
        if ("false".equals(System.getProperty(ENABLED_PROPERTY))) {
            return ENABLED_PROPERTY + "=false";
        }
        String resource = "native/" + platform() + "/" + LIBRARY;
        try (InputStream in = NativeUdp.class.getResourceAsStream(resource)) {
            if (in == null) {
                return "the jar has no " + resource + " (built where gcc was missing, or for another platform)";
            }
            Path file = Files.createTempFile("netreduce-udp-", ".so");
            try {
                Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
                System.load(file.toString());
            } finally {
                Files.deleteIfExists(file); // the loaded library stays mapped
            }
            return null;
        } catch (IOException | UnsatisfiedLinkError | SecurityException e) {
            return "loading " + resource + " failed: " + e;
        }
    }

    /** True if the native library is loaded. */
    public static boolean available() {
        return REASON == null;
    }

    /** Why the native library is not loaded, or null if it is. */
    public static String unavailableReason() {
        return REASON;
    }

    /** Which UDP I/O and CRC-32 run: native (and how the CRC folds), or pure Java and why. */
    public static String describe() {
        return available() ? "native batched UDP I/O (recvmmsg + GRO, sendmmsg + GSO), CRC-32 "
                + CRC_FOLDS[Math.min(crc32Folds(), CRC_FOLDS.length - 1)]
                : "pure-Java UDP I/O through Netty and the JDK's CRC-32 (native library not loaded: " + REASON + ")";
    }

    /**
     * A UDP socket bound to {@code ip:port} (0: any port), with GRO if asked; its descriptor.
     * Use it through this class only: its calls wait only as long as they are told to, but the
     * socket itself blocks, so that a {@link #receive} that waits sleeps in the receive call.
     */
    public static int open(int ip, int port, int receiveBuffer, int sendBuffer, boolean gro) {
        int fd = open0(ip, port, receiveBuffer, sendBuffer, gro);
        if (fd < 0) {
            throw new UncheckedIOException(new IOException("cannot open a UDP socket on "
                    + (ip >>> 24) + "." + (ip >>> 16 & 0xFF) + "." + (ip >>> 8 & 0xFF) + "." + (ip & 0xFF) + ":" + port
                    + ": " + error(-fd)));
        }
        return fd;
    }

    /**
     * Asks for a receive buffer of {@code bytes} on socket {@code fd}, past
     * {@code net.core.rmem_max} where the process may ({@code SO_RCVBUFFORCE}, which needs
     * {@code CAP_NET_ADMIN}), else as far as rmem_max allows; returns the bytes granted (half
     * of what the kernel reports, which counts its own bookkeeping as much again).
     */
    public static int growReceiveBuffer(int fd, int bytes) {
        int reported = growReceiveBuffer0(fd, bytes);
        if (reported < 0) {
            throw new UncheckedIOException(new IOException("cannot set the receive buffer of socket " + fd + ": "
                    + error(-reported)));
        }
        return reported / 2;
    }

    /** "Address already in use (errno 98)": the C library's text for {@code errno}. */
    public static String error(int errno) {
        return strerror0(errno) + " (errno " + errno + ")";
    }

    public static int localPort(int fd) {
        return localPort0(fd);
    }

    public static void close(int fd) {
        close0(fd);
    }

    /**
     * Receives up to {@code slots} messages into consecutive slots of {@code slotBytes} of
     * {@code buffer} (direct), waiting up to {@code timeoutMillis} for the first; returns how
     * many (0 after the timeout or an interrupted wait) or a negative errno. The wait is one
     * {@code recvmmsg} (the socket's {@code SO_RCVTIMEO} set to the timeout when it changes),
     * not a {@code poll} and a second receive.
     */
    public static int receive(int fd, ByteBuffer buffer, int slotBytes, int slots, IntBuffer meta, int timeoutMillis) {
        return receive0(fd, buffer, slotBytes, slots, meta, timeoutMillis);
    }

    /**
     * Sends {@code runs} runs of {@code plan} (direct), waiting up to {@code timeoutMillis}
     * whenever the socket is full; returns how many runs the socket took (fewer if it stayed
     * full), or a negative errno if it took none. The memory the plan's iovecs name must stay
     * alive and unchanged for the call.
     */
    public static int send(int fd, IntBuffer plan, int runs, int timeoutMillis) {
        return send0(fd, plan, runs, timeoutMillis);
    }

    /** The address of a direct buffer's first byte, for iovecs in a send plan. */
    public static long address(ByteBuffer direct) {
        if (!direct.isDirect()) {
            throw new IllegalArgumentException("a send plan can only name direct memory");
        }
        return address0(direct);
    }

    /** A waker (an eventfd) for {@link #awaitReadable} and {@link #wake}: its descriptor; close it with {@link #close}. */
    public static int waker() {
        int fd = waker0();
        if (fd < 0) {
            throw new UncheckedIOException(new IOException("cannot create an eventfd: " + error(-fd)));
        }
        return fd;
    }

    /** Ends a wait of {@link #awaitReadable} on {@code waker} (now, or the next one if none waits). */
    public static void wake(int waker) {
        wake0(waker);
    }

    /**
     * Waits up to {@code timeoutMillis} until {@code fd} has a datagram to read or
     * {@code waker} was woken (which this resets); 1 if either, 0 on timeout, else a negative
     * errno. Receives nothing.
     */
    public static int awaitReadable(int fd, int waker, int timeoutMillis) {
        return awaitReadable0(fd, waker, timeoutMillis);
    }

    /**
     * {@link java.util.zip.CRC32}'s value {@code crc} continued over {@code an} bytes at
     * native address {@code a} and then {@code bn} bytes at {@code b} ({@code native/udp/crc32.c}):
     * a datagram's ICRC template and the rest of it in one call, where the JDK's CRC pays
     * its fixed cost of about 30 ns per piece. Only while {@link #available()}.
     */
    public static native int crc32(int crc, long a, int an, long b, int bn);

    /** How {@link #crc32}'s widest fold on this CPU reads in {@link #describe()}, by {@link #crc32Folds()}. */
    private static final String[] CRC_FOLDS = {"through tables", "folded with PCLMULQDQ",
        "folded with VPCLMULQDQ (AVX-512)"};

    /**
     * How {@link #crc32} folds on this CPU: 0 through tables only, 1 with PCLMULQDQ (64 bytes a
     * step), 2 with VPCLMULQDQ on AVX-512 registers (256 bytes a step).
     */
    public static native int crc32Folds();

    /**
     * {@link #crc32} folding no wider than {@code folds} (a {@link #crc32Folds()} value): the
     * narrower paths run only on CPUs without the wider ones, so tests reach them through this.
     */
    public static native int crc32Narrowed(int folds, int crc, long a, int an, long b, int bn);

    /**
     * {@code dst[i] += src[i]} for {@code count} float32 lanes in the machine's byte order at
     * native addresses that do not overlap ({@code native/udp/lanes.c}): one IEEE add per
     * lane, the JVM's own, so the bits are those of a Java loop. Only while {@link #available()}.
     */
    public static native void addFloats(long dst, long src, int count);

    /**
     * {@code dst[i] = a[i] + b[i]} for {@code count} float32 lanes at native addresses (any
     * alignment; {@code dst} may be {@code a} or {@code b}), in the machine's byte order.
     */
    public static native void addFloats3(long dst, long a, long b, int count);

    /** {@link #addFloats} for int32 lanes, wrapping. */
    public static native void addInts(long dst, long src, int count);

    private static native int open0(int ip, int port, int receiveBuffer, int sendBuffer, boolean gro);

    private static native int localPort0(int fd);

    private static native int growReceiveBuffer0(int fd, int bytes);

    private static native String strerror0(int errno);

    private static native int close0(int fd);

    private static native int receive0(int fd, ByteBuffer buffer, int slotBytes, int slots, IntBuffer meta,
                                       int timeoutMillis);

    private static native int waker0();

    private static native int wake0(int waker);

    private static native int awaitReadable0(int fd, int waker, int timeoutMillis);

    private static native int send0(int fd, IntBuffer plan, int runs, int timeoutMillis);

    private static native long address0(ByteBuffer buffer);
}
