package io.netreduce.collectives;

import io.netreduce.collectives.algorithm.Algorithms;
import io.netreduce.collectives.algorithm.ElementType;
import io.netreduce.testkit.inproc.InprocSwitch;
import io.netreduce.verbs.Capability;
import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.Verbs;
import org.junit.jupiter.api.Assumptions;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test fixture: P communicators in this JVM over a transport named by the system property
 * {@code netreduce.test.transport} (default "soft", the RoCEv2 provider; "inproc" is the fast
 * in-process test provider; over "tcp" the netreduce tests are skipped, saying why), with
 * the software switch (or, for inproc, its stand-in) for the netreduce algorithm, and a way
 * to run one action on every rank at once with a deadline.
 */
@SuppressWarnings("try")
public final class TestGroup implements AutoCloseable {
    public static final String TRANSPORT = System.getProperty("netreduce.test.transport", "soft");
    public static final int MESSAGE_BYTES = 4096;
    public static final int MTU = 1024;
    private static final AtomicInteger SWITCH_PORTS = new AtomicInteger(41000);

    public final List<Communicator> comms;
    private final AutoCloseable sw;
    private final ExecutorService pool;

    @FunctionalInterface
    public interface RankAction<T> {
        T run(int rank, Communicator c) throws Exception;
    }

    private TestGroup(List<Communicator> comms, AutoCloseable sw, int p) {
        this.comms = comms;
        this.sw = sw;
        this.pool = Executors.newFixedThreadPool(p);
    }

    /** What the transport under test can do. */
    public static TransportCapabilities capabilities() {
        return Verbs.provider(TRANSPORT).capabilities();
    }

    /**
     * Skips the calling test, saying why, when its transport cannot carry {@code algorithm}
     * (netreduce needs RoCEv2 packets a switch can splice) and the group has more than one
     * rank (a world of one needs no network at all).
     */
    public static void assumeCarries(CommunicatorConfig config) {
        if (config.worldSize() > 1 || config.algorithm() != null) {
            String why = Algorithms.create(config.algorithm()).unsupported(ReduceOp.SUM, ElementType.FLOAT32,
                    Verbs.provider(config.transport()).capabilities());
            Assumptions.assumeTrue(why == null, () -> "skipped: " + why);
        }
    }

    /**
     * A random 127.a.b. block per JVM: the machine is shared with other test runs that bind
     * 127.0.0.x:4791, and a clash would fail this run for reasons that are not its own.
     */
    public static String loopbackPrefix() {
        return PREFIX;
    }

    private static final String PREFIX = "127." + (20 + new java.util.Random().nextInt(200)) + "."
            + (1 + new java.util.Random().nextInt(250)) + ".";

    public static CommunicatorConfig.Builder template(String algorithm) {
        return CommunicatorConfig.builder().algorithm(algorithm).transport(TRANSPORT).messageBytes(MESSAGE_BYTES)
                .loopbackPrefix(loopbackPrefix())
                .mtu(MTU).window(4).ringMessageBytes(MESSAGE_BYTES).ringWindow(4).timeout(Duration.ofSeconds(20));
    }

    /** P communicators; for "netreduce" a switch (stand-in for inproc) is started and configured. */
    public static TestGroup open(int p, String algorithm) throws Exception {
        return open(p, template(algorithm), 1L << 30);
    }

    /**
     * P communicators from {@code template}. For netreduce a switch is started and configured
     * unless the template names one: the real software switch for a transport that sends
     * real packets, the message-level stand-in for one that does not (the in-process
     * provider). A transport that cannot carry the algorithm skips the test (with P > 1).
     */
    public static TestGroup open(int p, CommunicatorConfig.Builder template, long switchMemory) throws Exception {
        CommunicatorConfig probe = template.worldSize(p).build();
        if (p > 1) {
            assumeCarries(probe);
        }
        AutoCloseable sw = null;
        if (CommunicatorConfig.NETREDUCE.equals(probe.algorithm()) && probe.switchAddress() == null) {
            if (!Verbs.provider(probe.transport()).capabilities().has(Capability.PATH_MTU_PACKETS)) {
                InprocSwitch s = InprocSwitch.start(new InetSocketAddress("127.0.0.1", SWITCH_PORTS.incrementAndGet()),
                        switchMemory);
                template.switchAddress(s.datapath()).switchControl(s.controlUri());
                sw = s;
            } else {
                RealSwitch s = RealSwitch.start(switchMemory);
                template.switchAddress(s.data()).switchControl(s.control());
                sw = s;
            }
        }
        try {
            return new TestGroup(Collectives.openLocal(p, template.build()), sw, p);
        } catch (RuntimeException e) {
            if (sw != null) {
                sw.close();
            }
            throw e;
        }
    }


    /**
     * Opens every rank of a group through the public path ({@link Collectives#open}), each on
     * its own thread, rank 0 hosting the rendezvous store on a free port, as separate
     * processes would; returns each rank's communicator or what it threw, within
     * {@code seconds}. The caller closes the communicators ({@link #closeAll}).
     */
    public static List<Object> openEach(int p, CommunicatorConfig.Builder template, long seconds) throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        ExecutorService pool = Executors.newFixedThreadPool(p);
        try {
            List<Future<Communicator>> fs = new ArrayList<>();
            for (int r = 0; r < p; r++) {
                CommunicatorConfig c = template.rank(r).worldSize(p).masterAddress("127.0.0.1").masterPort(port)
                        .build();
                fs.add(pool.submit(() -> Collectives.open(c)));
            }
            List<Object> out = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            for (Future<Communicator> f : fs) {
                try {
                    out.add(f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
                } catch (java.util.concurrent.ExecutionException e) {
                    out.add(e.getCause());
                }
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    /** Closes the communicators among {@code opened} concurrently (close waits for every rank). */
    public static void closeAll(List<Object> opened) throws Exception {
        List<Thread> closers = new ArrayList<>();
        for (Object o : opened) {
            if (o instanceof Communicator c) {
                Thread t = new Thread(c::close);
                t.start();
                closers.add(t);
            }
        }
        for (Thread t : closers) {
            t.join(60_000);
        }
    }

    /** Runs {@code action} on every rank concurrently; returns each rank's result or throwable. */
    public <T> List<Object> onEveryRank(RankAction<T> action, long seconds) throws Exception {
        List<Future<T>> fs = new ArrayList<>();
        for (int r = 0; r < comms.size(); r++) {
            int rank = r;
            fs.add(pool.submit(() -> action.run(rank, comms.get(rank))));
        }
        List<Object> out = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        for (Future<T> f : fs) {
            try {
                out.add(f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
            } catch (java.util.concurrent.ExecutionException e) {
                out.add(e.getCause());
            }
        }
        return out;
    }

    /** Like {@link #onEveryRank} but rethrows the first failure. */
    public <T> void all(RankAction<T> action, long seconds) throws Exception {
        for (Object o : onEveryRank(action, seconds)) {
            if (o instanceof Exception e) {
                throw e;
            }
            if (o instanceof Error e) {
                throw e;
            }
        }
    }

    @Override
    @SuppressWarnings("try")
    public void close() throws Exception {
        List<Future<?>> closing = new ArrayList<>();
        for (Communicator c : comms) {
            closing.add(pool.submit(c::close));
        }
        for (Future<?> f : closing) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
        if (sw != null) {
            sw.close();
        }
    }
}
