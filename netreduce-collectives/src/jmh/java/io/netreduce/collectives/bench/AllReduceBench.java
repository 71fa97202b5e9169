package io.netreduce.collectives.bench;

import io.netreduce.collectives.EnvironmentVariables;

import io.netreduce.wire.ina.InaHeader;
import io.netreduce.verbs.Capability;
import io.netreduce.verbs.Verbs;

import io.netreduce.collectives.Collectives;
import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.algorithm.MessagePlan;
import io.netreduce.testkit.inproc.InprocSwitch;
import io.netreduce.verbs.DeviceOptions;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * All-reduce figures on loopback, nccl-tests style (algbw = bytes / time, busbw = algbw ×
 * 2(P-1)/P, GB = 1e9 B), for P ranks in this JVM. Arguments:
 * {@code algorithm transport P sizesInBytes(comma) iterations [messageBytes] [window]}.
 * For netreduce over a transport without packets of its own (the "inproc" test transport)
 * it starts the in-process switch stand-in;
 * for other transports pass the switch with NETREDUCE_SWITCH / NETREDUCE_SWITCH_CONTROL.
 */
public final class AllReduceBench {
    private AllReduceBench() {
    }

    public static void main(String[] args) throws Exception {
        String algorithm = args[0];
        String transport = args[1];
        int p = Integer.parseInt(args[2]);
        String[] sizes = args[3].split(",");
        int iterations = Integer.parseInt(args[4]);
        int messageBytes = args.length > 5 ? Integer.parseInt(args[5]) : 16 * 1024;
        int window = args.length > 6 ? Integer.parseInt(args[6]) : 4;
        CommunicatorConfig.Builder b = CommunicatorConfig.builder().algorithm(algorithm).transport(transport)
                .messageBytes(messageBytes).window(window).ringMessageBytes(messageBytes).ringWindow(window)
                .timeout(Duration.ofSeconds(60));
        InprocSwitch sw = null;
        String switchEnv = System.getenv(EnvironmentVariables.SWITCH);
        if (switchEnv != null) {
            CommunicatorConfig env = CommunicatorConfig.fromEnvironment();
            b.switchAddress(env.switchAddress()).switchControl(env.switchControl());
        } else if (CommunicatorConfig.NETREDUCE.equals(algorithm)
                && !Verbs.provider(transport).capabilities().has(Capability.PATH_MTU_PACKETS)) {
            // a transport without packets of its own (the in-process test provider): its switch stand-in
            sw = InprocSwitch.start(new InetSocketAddress("127.0.0.1", 4791), 1L << 32);
            b.switchAddress(sw.datapath()).switchControl(sw.controlUri());
        }
        List<Communicator> comms = Collectives.openLocal(p, b.build());
        ExecutorService pool = Executors.newFixedThreadPool(p);
        System.out.printf(Locale.ROOT, "# algorithm %s (requested %s), transport %s, P=%d, message %d B, window %d%n",
                comms.get(0).algorithm(), algorithm, transport, p, messageBytes, window);
        System.out.printf(Locale.ROOT, "# %12s %10s %12s %10s %10s%n", "size (B)", "count", "time (us)", "algbw",
                "busbw");
        try {
            for (String s : sizes) {
                int bytes = Integer.parseInt(s.trim());
                int n = bytes / 4;
                List<FloatBuffer> tensors = new ArrayList<>();
                for (int r = 0; r < p; r++) {
                    FloatBuffer t = ByteBuffer.allocateDirect(Math.max(4, bytes)).order(InaHeader.PAYLOAD_ORDER)
                            .asFloatBuffer();
                    for (int i = 0; i < n; i++) {
                        t.put(i, (i % 1000) * 0.001f + r);
                    }
                    tensors.add(t.limit(n));
                }
                CyclicBarrier start = new CyclicBarrier(p);
                List<Future<Long>> fs = new ArrayList<>();
                for (int r = 0; r < p; r++) {
                    int rank = r;
                    fs.add(pool.submit(() -> {
                        Communicator c = comms.get(rank);
                        c.allReduce(tensors.get(rank)); // warm-up
                        start.await(60, TimeUnit.SECONDS);
                        long t0 = System.nanoTime();
                        for (int i = 0; i < iterations; i++) {
                            c.allReduce(tensors.get(rank));
                        }
                        return System.nanoTime() - t0;
                    }));
                }
                long worst = 0;
                for (Future<Long> f : fs) {
                    worst = Math.max(worst, f.get(600, TimeUnit.SECONDS));
                }
                double seconds = worst / 1e9 / iterations;
                double algbw = bytes / seconds / 1e9;
                System.out.printf(Locale.ROOT, "  %12d %10d %12.1f %10.3f %10.3f%n", bytes, n, seconds * 1e6, algbw,
                        algbw * 2 * (p - 1) / p);
            }
        } finally {
            pool.shutdownNow();
            List<Thread> closers = new ArrayList<>();
            for (Communicator c : comms) {
                Thread t = new Thread(c::close);
                t.start();
                closers.add(t);
            }
            for (Thread t : closers) {
                t.join(60_000);
            }
            if (sw != null) {
                sw.close();
            }
        }
    }
}
