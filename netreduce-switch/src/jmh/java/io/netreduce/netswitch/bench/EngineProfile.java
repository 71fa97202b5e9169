package io.netreduce.netswitch.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.zip.CRC32;

/**
 * Timing loop around {@link EngineBenchmark}'s packet stream that reports thread CPU time as
 * well as wall time, with a same-run baseline (copy a packet's payload + CRC-32 of it, the
 * least any store-and-forward datapath does): on a shared 2-core machine wall time mostly
 * measures the neighbours, CPU time measures the code.
 *
 * <p>Run: {@code mvn -pl netreduce-switch exec:exec -Dexec.classpathScope=test -Dexec.executable=java
 * -Dexec.args="-cp %classpath io.netreduce.netswitch.bench.EngineProfile fp32"}
 */
public final class EngineProfile {
    public static void main(String[] args) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        EngineBenchmark b = new EngineBenchmark();
        b.dtype = args.length > 0 ? args[0] : "fp32";
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        b.craft();
        int mtu = EngineBenchmark.MTU;
        ByteBuffer src = ByteBuffer.allocateDirect(mtu);
        for (int i = 0; i < mtu; i++) {
            src.put(i, (byte) (i * 31 + 7));
        }
        byte[] dst = new byte[mtu];
        CRC32 crc = new CRC32();
        long sink = 0;
        for (int round = 0; round < rounds; round++) {
            long wall = 0;
            long cpu = 0;
            long ops = 0;
            for (int i = 0; i < 50; i++) {
                b.freshRing();
                long c0 = mx.getCurrentThreadCpuTime();
                long t0 = System.nanoTime();
                sink += b.packets();
                wall += System.nanoTime() - t0;
                cpu += mx.getCurrentThreadCpuTime() - c0;
                b.check();
                ops += EngineBenchmark.OPS;
            }
            long bc0 = mx.getCurrentThreadCpuTime();
            int baseOps = 200_000;
            for (int i = 0; i < baseOps; i++) {
                src.get(0, dst, 0, mtu);
                crc.reset();
                crc.update(dst, 0, mtu);
                sink += crc.getValue();
            }
            long baseCpu = mx.getCurrentThreadCpuTime() - bc0;
            System.out.printf("round %d: engine %.0f ns/packet CPU (%.2f Mpps/core), %.0f ns wall; "
                            + "baseline copy+CRC of %d B %.0f ns%n", round, cpu / (double) ops, ops * 1e3 / cpu,
                    wall / (double) ops, mtu, baseCpu / (double) baseOps);
        }
        if (sink == 42) {
            System.out.println();
        }
    }
}
