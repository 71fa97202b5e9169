package io.netreduce.collectives;

import io.netreduce.wire.control.ControlPaths;

import io.netreduce.wire.roce.PathMtu;
import io.netreduce.wire.roce.RoceAddressing;

import io.netreduce.collectives.algorithm.MessagePlan;
import io.netreduce.verbs.Capability;
import io.netreduce.verbs.FaultPlan;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.TransportCapabilities;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Everything a rank needs to join a group. The algorithm ("netreduce" or "ring") and the
 * transport (a verbs provider name such as "soft" or "tcp") are chosen independently.
 * Immutable; build with {@link #builder()} or read from the environment with
 * {@link #fromEnvironment()}.
 */
public final class CommunicatorConfig {
    /** The in-network aggregation algorithm's name. */
    public static final String NETREDUCE = "netreduce";
    /** The ring algorithm's name. */
    public static final String RING = "ring";
    /** Every built-in algorithm's name. */
    public static final List<String> ALGORITHMS = List.of(NETREDUCE, RING);
    /**
     * How every rank's collectives are checked against the others' (same collective, same
     * element count, same reduction and root, same order), so that a mismatch fails on
     * every rank, naming what each rank called, instead of hanging or returning a
     * meaningless result.
     */
    public enum Agreement {
        /**
         * The default. The check travels with the data: the ring's messages carry each
         * rank's call and the receiver compares it with its own before it uses any data, so
         * a mismatch fails the very call that has it, on every rank, and the rendezvous
         * store carries nothing per call. Only when something fails do the ranks tell the
         * store what they called, so that the error lists every rank's call. Netreduce's
         * messages carry a digest of the call, which the switch compares across ranks
         * before it sums.
         */
        IN_BAND,
        /**
         * Every call is also announced to the rendezvous store and returns only once every
         * rank has confirmed it called the same collective: one store round trip per call
         * (tens to hundreds of microseconds; docs/benchmarks.md). It catches nothing more
         * than {@link #IN_BAND}; it is for debugging a hang: a collective that one rank never
         * calls fails at the timeout naming the ranks that never started it.
         */
        STRICT;

        /**
         * The mode a setting names: "in-band" (also "in_band", and the older names "async"
         * and "off", whose checks now cost nothing), or "strict"; null for anything else.
         */
        public static Agreement parse(String text) {
            switch (text.trim().toLowerCase(java.util.Locale.ROOT).replace('-', '_')) {
                case "in_band", "inband", "async", "off":
                    return IN_BAND;
                case "strict":
                    return STRICT;
                default:
                    return null;
            }
        }
    }

    /** {@link #smallTensorBytes()} when not set: the threshold follows the group size ({@link #smallTensorBytes(int)}). */
    public static final int AUTO_SMALL_TENSOR_BYTES = -1;
    /**
     * The automatic small-tensor threshold is {@code SMALL_TENSOR_SCALE / P²}, twice that
     * where recursive doubling takes it, within these bounds.
     */
    static final int SMALL_TENSOR_SCALE = 1 << 20;
    static final int MIN_AUTO_SMALL_TENSOR_BYTES = 16 * 1024;
    static final int MAX_AUTO_SMALL_TENSOR_BYTES = 256 * 1024;
    /**
     * The default of {@link #halvingDoublingBytes()}. Measured in the same processes against
     * the pipelined ring (docs/benchmarks.md, halving and doubling): over tcp at P = 4
     * 1.10-1.12x its busbw at 1 MiB and 1.10-1.27x at 2 MiB, level at 4 MiB; at P = 8 1.31x at
     * 1 MiB, level at 2 MiB; over soft at P = 4 1.42x and 1.04x. The schedule's staging, held
     * per communicator, is about 4(P-1)/P times this (6 MiB at P = 4).
     */
    public static final int DEFAULT_HALVING_DOUBLING_BYTES = 2 * 1024 * 1024;
    /**
     * Netreduce's default window and message size: 4 messages of 256 KiB in flight per rank,
     * 2 MiB of switch memory per rank (2N messages), 256 PSNs at MTU 4096. Measured through
     * the software switch (docs/benchmarks.md, "Netreduce's window"): against the former 8 ×
     * 128 KiB (the same switch memory and PSNs in flight), 1.03-1.20x the busbw at 64 MiB and
     * P = 4 at 0.81-0.93x the CPU per byte, 1.05x at P = 2 at 0.87x, level at 8 MiB; 4 × 512 KiB
     * and 8 × 256 KiB were slower. Earlier: 16 KiB × 4 left the ranks waiting on round trips
     * (2.6x slower), a window of 16 gained nothing.
     */
    public static final int DEFAULT_WINDOW = 4;
    public static final int DEFAULT_MESSAGE_BYTES = 256 * 1024;
    /**
     * The ring's default window: 4 messages in flight per rank. Measured at 64 MiB against
     * the former 8 × 1 MiB (docs/benchmarks.md, "The ring's messages"): with 256 KiB messages
     * over tcp 1.37× the busbw at P = 4 and 1.2× at P = 2, over soft level; with 1 MiB
     * messages over tcp a window of 2 or 8 measured level with 4. Under loss it bounds
     * go-back-N's resent bytes: a lost packet costs what was sent behind it, at most the window.
     */
    public static final int DEFAULT_RING_WINDOW = 4;
    /** {@link #ringMessageBytes()} when not set: the size follows the transport ({@link #ringMessageBytes(TransportCapabilities)}). */
    public static final int AUTO_RING_MESSAGE_BYTES = -1;
    /**
     * The ring's message size on a transport that cuts messages into path-MTU packets (an RC
     * NIC, the soft RoCEv2 provider): there a message costs per packet, whatever its size,
     * and a lost packet costs go-back-N what was sent behind it, so 4 × 256 KiB keeps the
     * resent bytes at 1 MiB (256 PSNs at MTU 4096). A message is summed while the slice it
     * landed in is still in the core's cache.
     */
    public static final int PACKET_RING_MESSAGE_BYTES = 256 * 1024;
    /**
     * The ring's message size on a byte-stream transport (tcp): there each message costs system
     * calls, a frame, a completion and its sum's call, so fewer and larger ones cost less, and
     * a lost segment is the kernel's to resend. Measured against 256 KiB in the same
     * processes over tcp, three sets (docs/benchmarks.md, "The ring's messages"): 1.05-1.24x
     * the busbw at P = 2 (1-64 MiB) and 1.11-1.16x at P = 4 (4-64 MiB) at 0.80-0.90x the CPU
     * per byte in the first, 0.82-1.15x in the second, 1.14-1.20x at P = 4 in the third; 512
     * KiB gained less, 2 MiB no more.
     */
    public static final int STREAM_RING_MESSAGE_BYTES = 1024 * 1024;
    /** torchrun's default rendezvous port. */
    public static final int DEFAULT_MASTER_PORT = 29500;
    /** The software switch's default control-plane port. */
    public static final int DEFAULT_SWITCH_CONTROL_PORT = ControlPaths.DEFAULT_PORT;

    private final int rank;
    private final int worldSize;
    private final String masterAddress;
    private final int masterPort;
    private final String algorithm;
    private final String transport;
    private final String localAddress;
    private final int devicePort;
    private final InetSocketAddress switchAddress;
    private final URI switchControl;
    private final int window;
    private final int messageBytes;
    private final int ringWindow;
    private final int ringMessageBytes;
    private final int smallTensorBytes;
    private final int halvingDoublingBytes;
    private final Map<String, String> deviceProperties;
    private final int localWorldSize;
    private final int localRank;
    private final int hosts;
    private final boolean hierarchical;
    private final int mtu;
    private final Duration timeout;
    private final FaultPlan faults;
    private final Duration ackTimeout;
    private final String loopbackPrefix;
    private final Agreement agreement;
    private final String fallback;
    private final List<String> sources;

    private CommunicatorConfig(Builder b) {
        if (b.worldSize < 1) {
            throw new IllegalArgumentException("world size must be at least 1: " + b.worldSize);
        }
        if (b.worldSize > 0xFFFF) {
            throw new IllegalArgumentException("world size must fit 16 bits: " + b.worldSize);
        }
        if (b.rank < 0 || b.rank >= b.worldSize) {
            throw new IllegalArgumentException("rank " + b.rank + " is outside world of size " + b.worldSize);
        }
        if (b.window < 1) {
            throw new IllegalArgumentException("window must be at least 1 message: " + b.window);
        }
        if (b.masterPort < 0 || b.masterPort > 0xFFFF) {
            throw new IllegalArgumentException("master port out of range: " + b.masterPort);
        }
        MessagePlan.checkPayloadBytes(b.messageBytes);
        if (b.ringWindow < 1) {
            throw new IllegalArgumentException("ring window must be at least 1 message: " + b.ringWindow);
        }
        if (b.ringMessageBytes != AUTO_RING_MESSAGE_BYTES) {
            MessagePlan.checkPayloadBytes(b.ringMessageBytes);
        }
        if (b.smallTensorBytes < 0 && b.smallTensorBytes != AUTO_SMALL_TENSOR_BYTES) {
            throw new IllegalArgumentException("small tensor threshold must not be negative: " + b.smallTensorBytes);
        }
        PathMtu.check(b.mtu);
        Objects.requireNonNull(b.timeout, "timeout");
        if (b.timeout.isNegative() || b.timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive: " + b.timeout);
        }
        this.rank = b.rank;
        this.worldSize = b.worldSize;
        this.masterAddress = Objects.requireNonNull(b.masterAddress, "master address");
        this.masterPort = b.masterPort;
        this.algorithm = Objects.requireNonNull(b.algorithm, "algorithm");
        this.transport = Objects.requireNonNull(b.transport, "transport");
        this.localAddress = b.localAddress;
        this.devicePort = b.devicePort;
        this.switchAddress = b.switchAddress;
        this.switchControl = b.switchControl != null || b.switchAddress == null ? b.switchControl
                : URI.create("http://" + b.switchAddress.getHostString() + ":" + DEFAULT_SWITCH_CONTROL_PORT);
        this.window = b.window;
        this.messageBytes = b.messageBytes;
        this.ringWindow = b.ringWindow;
        this.ringMessageBytes = b.ringMessageBytes;
        this.smallTensorBytes = b.smallTensorBytes;
        if (b.halvingDoublingBytes < 0) {
            throw new IllegalArgumentException("halving-doubling threshold must not be negative: " + b.halvingDoublingBytes);
        }
        this.halvingDoublingBytes = b.halvingDoublingBytes;
        this.deviceProperties = Map.copyOf(b.deviceProperties);
        if (b.localWorldSize < 0 || b.localWorldSize > b.worldSize) {
            throw new IllegalArgumentException("local world size " + b.localWorldSize + " is outside 0.."
                    + b.worldSize);
        }
        this.localWorldSize = b.localWorldSize;
        if (b.localRank < -1 || b.localRank >= b.worldSize
                || (b.localWorldSize > 0 && b.localRank >= b.localWorldSize)) {
            throw new IllegalArgumentException("local rank " + b.localRank + " is outside 0.."
                    + ((b.localWorldSize > 0 ? b.localWorldSize : b.worldSize) - 1));
        }
        this.localRank = b.localRank;
        if (b.hosts < 0 || b.hosts > b.worldSize || (b.hosts > 0 && b.worldSize % b.hosts != 0)) {
            throw new IllegalArgumentException("cannot group " + b.worldSize + " ranks into " + b.hosts
                    + " emulated hosts of equal size: the host count must divide the world size");
        }
        this.hosts = b.hosts;
        this.hierarchical = b.hierarchical;
        this.mtu = b.mtu;
        this.timeout = b.timeout;
        this.faults = Objects.requireNonNull(b.faults, "faults");
        this.ackTimeout = Objects.requireNonNull(b.ackTimeout, "ackTimeout");
        this.loopbackPrefix = Objects.requireNonNull(b.loopbackPrefix, "loopbackPrefix");
        if (!loopbackPrefix.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.")) {
            throw new IllegalArgumentException("loopback prefix must look like 127.a.b. : " + loopbackPrefix);
        }
        if (ackTimeout.isNegative() || ackTimeout.isZero()) {
            throw new IllegalArgumentException("ACK timeout must be positive: " + ackTimeout);
        }
        this.agreement = Objects.requireNonNull(b.agreement, "agreement");
        if (b.fallback != null && !ALGORITHMS.contains(b.fallback.toLowerCase(java.util.Locale.ROOT))) {
            throw new IllegalArgumentException("unknown fallback algorithm '" + b.fallback + "': use one of "
                    + ALGORITHMS + ", or none");
        }
        this.fallback = b.fallback == null ? null : b.fallback.toLowerCase(java.util.Locale.ROOT);
        this.sources = List.copyOf(b.sources);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this configuration's values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.rank = rank;
        b.worldSize = worldSize;
        b.masterAddress = masterAddress;
        b.masterPort = masterPort;
        b.algorithm = algorithm;
        b.transport = transport;
        b.localAddress = localAddress;
        b.devicePort = devicePort;
        b.switchAddress = switchAddress;
        b.switchControl = switchControl;
        b.window = window;
        b.messageBytes = messageBytes;
        b.ringWindow = ringWindow;
        b.ringMessageBytes = ringMessageBytes;
        b.smallTensorBytes = smallTensorBytes;
        b.halvingDoublingBytes = halvingDoublingBytes;
        b.deviceProperties.putAll(deviceProperties);
        b.localWorldSize = localWorldSize;
        b.localRank = localRank;
        b.hosts = hosts;
        b.hierarchical = hierarchical;
        b.mtu = mtu;
        b.timeout = timeout;
        b.faults = faults;
        b.ackTimeout = ackTimeout;
        b.loopbackPrefix = loopbackPrefix;
        b.agreement = agreement;
        b.fallback = fallback;
        b.sources.addAll(sources);
        return b;
    }

    /** Reads {@link System#getenv()}; see {@link #fromEnvironment(Map)}. */
    public static CommunicatorConfig fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    /**
     * Reads rank, world size and rendezvous address from, in order of precedence,
     * {@code NETREDUCE_RANK/NETREDUCE_WORLD_SIZE/NETREDUCE_MASTER_ADDR/NETREDUCE_MASTER_PORT},
     * torchrun's {@code RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT}, Open MPI's
     * {@code OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE} and Slurm's
     * {@code SLURM_PROCID/SLURM_NTASKS}; and the other settings from {@code NETREDUCE_*}
     * variables (see the user guide). Without any launcher variables it is a world of one.
     */
    public static CommunicatorConfig fromEnvironment(Map<String, String> env) {
        return EnvironmentReader.read(env);
    }

    public int rank() { return rank; }
    public int worldSize() { return worldSize; }
    public String masterAddress() { return masterAddress; }
    public int masterPort() { return masterPort; }
    /** Requested algorithm: "netreduce" or "ring" (see {@link #fallback()} for what runs when it cannot). */
    public String algorithm() { return algorithm; }
    /** Verbs provider name for the data path. */
    public String transport() { return transport; }
    /** Address this rank's device binds, or null to choose one (127.0.0.(rank+2) for a loopback master). */
    public String localAddress() { return localAddress; }
    public int devicePort() { return devicePort; }
    /** The switch's data-path address (every device's gateway in netreduce mode), or null. */
    public InetSocketAddress switchAddress() { return switchAddress; }
    /** The switch's HTTP control plane, or null. */
    public URI switchControl() { return switchControl; }
    /** Messages in flight per rank (N). */
    public int window() { return window; }
    /** Tensor bytes per message. */
    public int messageBytes() { return messageBytes; }
    /**
     * Messages in flight per rank for ring all-reduce. Separate from {@link #window()}:
     * ring traffic needs no switch memory, so it can keep far more bytes in flight, and a
     * host-to-host ring is latency-bound with the switch's small window (measured: 64 MiB
     * over tcp at P = 2 went from 0.21 to 1.07 GB/s busbw with 8 × 1 MiB).
     */
    public int ringWindow() { return ringWindow; }
    /**
     * Tensor bytes per message for ring all-reduce as configured, or
     * {@link #AUTO_RING_MESSAGE_BYTES} (the default) to leave it to
     * {@link #ringMessageBytes(TransportCapabilities)}.
     */
    public int ringMessageBytes() { return ringMessageBytes; }

    /**
     * The ring's message size over {@code transport}: the configured one, else
     * {@link #PACKET_RING_MESSAGE_BYTES} where the transport cuts messages into path-MTU
     * packets and {@link #STREAM_RING_MESSAGE_BYTES} where it carries them as a byte stream.
     */
    public int ringMessageBytes(TransportCapabilities transport) {
        return ringMessageBytes != AUTO_RING_MESSAGE_BYTES ? ringMessageBytes
                : transport.has(Capability.PATH_MTU_PACKETS) ? PACKET_RING_MESSAGE_BYTES : STREAM_RING_MESSAGE_BYTES;
    }
    /**
     * The ring's all-reduces of at most this many bytes take its small-tensor path (every
     * rank's tensor goes around the ring and each rank reduces the copies: P-1 steps
     * instead of 2(P-1)); 0 turns it off; {@link #AUTO_SMALL_TENSOR_BYTES} (the default)
     * leaves it to {@link #smallTensorBytes(int)}.
     */
    public int smallTensorBytes() { return smallTensorBytes; }

    /**
     * The small-tensor threshold a group of {@code groupSize} ranks uses: the configured one,
     * else 1 MiB / P² within 16–256 KiB, or 2 MiB / P² where P is a power of two from 4 and
     * halving-doubling is on (recursive doubling then takes the small sizes). The gather
     * sends (P-1)·n bytes per rank where the ring sends 2(P-1)/P·n, in half the steps, so the
     * size where the saved steps stop paying for the extra bytes falls with P; measured here
     * near 256 KiB at P = 2 and 64 KiB at P = 4. Recursive doubling sends log2(P)·n in log2(P)
     * steps, and at P = 4 beat halving-doubling up to 128 KiB (docs/benchmarks.md, "Small
     * tensors").
     */
    public int smallTensorBytes(int groupSize) {
        return smallTensorBytes != AUTO_SMALL_TENSOR_BYTES ? smallTensorBytes
                : defaultSmallTensorBytes(groupSize, halvingDoublingBytes);
    }

    /**
     * The ring algorithm's all-reduces above the small-tensor threshold and up to this many
     * bytes take the halving-doubling schedule where the group size is a power of two from 4:
     * 2·log2(P) steps instead of the ring's 2(P-1), the same bytes per rank, one message per
     * step to a partner at distance P/2, P/4, ... 1 and back; 0 turns it off. Above it the
     * pipelined ring, whose neighbour-only steps overlap, is faster (docs/benchmarks.md).
     */
    public int halvingDoublingBytes() { return halvingDoublingBytes; }

    /**
     * Settings of the transport for this communicator's devices alone, over the process-wide
     * ones (system properties and environment): the provider's own keys, such as
     * {@code tcp.spinMicros} ({@link io.netreduce.verbs.VerbsProvider#deviceProperties()}
     * lists them), passed as {@link io.netreduce.verbs.DeviceOptions#properties()}. Empty by
     * default. Two communicators of one process can so differ in how their transport moves
     * data, as the benchmark's algorithm variants do.
     */
    public Map<String, String> deviceProperties() { return deviceProperties; }

    /**
     * The automatic small-tensor threshold of a group of {@code groupSize} ranks whose
     * halving-doubling threshold is {@code halvingDoublingBytes} (see {@link #smallTensorBytes(int)}).
     */
    public static int defaultSmallTensorBytes(int groupSize, int halvingDoublingBytes) {
        long p = Math.max(1, groupSize);
        boolean recursiveDoubling = p >= 4 && Long.bitCount(p) == 1 && halvingDoublingBytes >= 4;
        long scaled = (recursiveDoubling ? 2L * SMALL_TENSOR_SCALE : SMALL_TENSOR_SCALE) / (p * p);
        return (int) Math.max(MIN_AUTO_SMALL_TENSOR_BYTES, Math.min(MAX_AUTO_SMALL_TENSOR_BYTES, scaled));
    }
    /**
     * How many of the group's ranks run on this rank's host, as the launcher says
     * (torchrun's {@code LOCAL_WORLD_SIZE}, Open MPI's {@code OMPI_COMM_WORLD_LOCAL_SIZE}),
     * or 0 if none did: then a group whose rendezvous is on loopback counts as all local.
     */
    public int localWorldSize() { return localWorldSize; }
    /**
     * This rank's index among the ranks of its host as the launcher says (torchrun's
     * {@code LOCAL_RANK}, Open MPI's {@code OMPI_COMM_WORLD_LOCAL_RANK}, Slurm's
     * {@code SLURM_LOCALID}), or -1 if none did.
     */
    public int localRank() { return localRank; }
    /**
     * Emulated hosts on one machine (tests, the demo, benchmarks): rank r belongs to host
     * {@code r / (P / hosts)}; 0 (the default) groups ranks by the host they really run on
     * (io.netreduce.collectives.algorithm.HostLayout).
     */
    public int hosts() { return hosts; }
    /**
     * True (the default) if ranks that share a host reduce through shared memory first and
     * only one rank per local position crosses the network (Parallel NetReduce, or a
     * hierarchical ring); false runs the requested algorithm flat over every rank.
     */
    public boolean hierarchical() { return hierarchical; }
    public int mtu() { return mtu; }
    /** Longest wait without progress before an operation fails (default 30 s). */
    public Duration timeout() { return timeout; }
    /** Seeded faults injected on every packet this rank's device sends (tests and demos; default none). */
    public FaultPlan faults() { return faults; }
    /**
     * The transport's local ACK timeout (RC retransmission timer; 7 retries before a peer is
     * declared gone). Default 200 ms: long enough for a loaded 2-core machine, short enough to
     * recover a lost tail packet quickly. Lost packets are normally recovered by sequence NAKs
     * (the switch re-sends, in order, results that completed behind a lost packet), so the timer
     * fires mainly for the last packets of a window. The RETRY_EXC_ERR once seen at 200 ms with
     * injected loss was not a budget too small but ranks closing while a peer still recovered
     * its tail; close() now waits for every rank (docs/benchmarks.md, "Liveness under loss").
     */
    public Duration ackTimeout() { return ackTimeout; }
    /** On one machine (loopback master, no local address), rank r binds prefix + (r+2); default "127.0.0.". */
    public String loopbackPrefix() { return loopbackPrefix; }
    /** How collectives are checked across ranks (default {@link Agreement#IN_BAND}). */
    public Agreement agreement() { return agreement; }
    /**
     * The algorithm to run instead when the requested one cannot (its transport cannot carry
     * it, no switch is configured, the switch refused the ring), or null (the default): then
     * {@code open} fails on every rank with the reason. With a fallback, {@code open} logs a
     * WARN on rank 0 and {@link Communicator#algorithm()} says what runs and why.
     */
    public String fallback() { return fallback; }
    /** Where each setting came from, for the start-up log line. */
    public List<String> sources() { return sources; }

    @Override
    public String toString() {
        return "CommunicatorConfig{rank=" + rank + "/" + worldSize + ", master=" + masterAddress + ":" + masterPort
                + ", algorithm=" + algorithm + ", transport=" + transport
                + (localAddress != null ? ", local=" + localAddress : "") + ", devicePort=" + devicePort
                + (switchAddress != null ? ", switch=" + switchAddress + " control " + switchControl : "")
                + ", window=" + window + ", messageBytes=" + messageBytes + ", ringWindow=" + ringWindow
                + ", ringMessageBytes=" + (ringMessageBytes == AUTO_RING_MESSAGE_BYTES ? "auto" : ringMessageBytes) + ", smallTensorBytes=" + (smallTensorBytes == AUTO_SMALL_TENSOR_BYTES ? "auto" : smallTensorBytes)
                + ", halvingDoublingBytes=" + halvingDoublingBytes
                + (deviceProperties.isEmpty() ? "" : ", deviceProperties=" + deviceProperties) + ", mtu=" + mtu
                + ", agreement=" + agreement + (hosts > 0 ? ", hosts=" + hosts : "")
                + (localRank >= 0 ? ", localRank=" + localRank + "/" + localWorldSize : "")
                + (hierarchical ? "" : ", hierarchical=off")
                + (fallback != null ? ", fallback=" + fallback : "")
                + ", timeout=" + timeout.toMillis() + "ms" + (faults.isNone() ? "" : ", faults=" + faults) + "}";
    }

    public static final class Builder {
        private int rank;
        private int worldSize = 1;
        private String masterAddress = "127.0.0.1";
        private int masterPort = DEFAULT_MASTER_PORT;
        private String algorithm = NETREDUCE;
        private String transport = "soft";
        private String localAddress;
        private int devicePort = RoceAddressing.UDP_PORT;
        private InetSocketAddress switchAddress;
        private URI switchControl;
        private int window = DEFAULT_WINDOW;
        private int messageBytes = DEFAULT_MESSAGE_BYTES;
        private int ringWindow = DEFAULT_RING_WINDOW;
        private int ringMessageBytes = AUTO_RING_MESSAGE_BYTES;
        private int smallTensorBytes = AUTO_SMALL_TENSOR_BYTES;
        private int halvingDoublingBytes = DEFAULT_HALVING_DOUBLING_BYTES;
        private final Map<String, String> deviceProperties = new LinkedHashMap<>();
        private int localWorldSize;
        private int localRank = -1;
        private int hosts;
        private boolean hierarchical = true;
        private int mtu = 4096;
        private Duration timeout = Duration.ofSeconds(30);
        private FaultPlan faults = FaultPlan.NONE;
        private Duration ackTimeout = Duration.ofMillis(200);
        private String loopbackPrefix = "127.0.0.";
        private Agreement agreement = Agreement.IN_BAND;
        private String fallback;
        private final List<String> sources = new ArrayList<>();

        public Builder rank(int v) { rank = v; return this; }
        public Builder worldSize(int v) { worldSize = v; return this; }
        public Builder masterAddress(String v) { masterAddress = v; return this; }
        public Builder masterPort(int v) { masterPort = v; return this; }
        public Builder algorithm(String v) { algorithm = v; return this; }
        public Builder transport(String v) { transport = v; return this; }
        public Builder localAddress(String v) { localAddress = v; return this; }
        public Builder devicePort(int v) { devicePort = v; return this; }
        public Builder switchAddress(InetSocketAddress v) { switchAddress = v; return this; }
        public Builder switchControl(URI v) { switchControl = v; return this; }
        public Builder window(int v) { window = v; return this; }
        public Builder messageBytes(int v) { messageBytes = v; return this; }
        public Builder ringWindow(int v) { ringWindow = v; return this; }
        public Builder ringMessageBytes(int v) { ringMessageBytes = v; return this; }
        public Builder smallTensorBytes(int v) { smallTensorBytes = v; return this; }
        /** See {@link CommunicatorConfig#halvingDoublingBytes()}. */
        public Builder halvingDoublingBytes(int v) { halvingDoublingBytes = v; return this; }
        /** Sets one of {@link CommunicatorConfig#deviceProperties()}. */
        public Builder deviceProperty(String key, String value) {
            deviceProperties.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }
        public Builder localWorldSize(int v) { localWorldSize = v; return this; }
        public Builder localRank(int v) { localRank = v; return this; }
        /** See {@link CommunicatorConfig#hosts()}. */
        public Builder hosts(int v) { hosts = v; return this; }
        /** See {@link CommunicatorConfig#hierarchical()}. */
        public Builder hierarchical(boolean v) { hierarchical = v; return this; }
        public Builder mtu(int v) { mtu = v; return this; }
        public Builder timeout(Duration v) { timeout = v; return this; }
        public Builder faults(FaultPlan v) { faults = v; return this; }
        public Builder ackTimeout(Duration v) { ackTimeout = v; return this; }
        public Builder loopbackPrefix(String v) { loopbackPrefix = v; return this; }
        public Builder agreement(Agreement v) { agreement = v; return this; }
        /** See {@link CommunicatorConfig#fallback()}; null for none. */
        public Builder fallback(String v) { fallback = v; return this; }

        Builder source(String s) {
            sources.add(s);
            return this;
        }

        public CommunicatorConfig build() {
            return new CommunicatorConfig(this);
        }
    }
}
