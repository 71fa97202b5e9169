package io.netreduce.netswitch.bench;

import io.netreduce.netswitch.ControlClient;
import io.netreduce.netswitch.RingFixture;
import io.netreduce.netswitch.SwitchServer;
import io.netreduce.netswitch.UdpRingHosts;
import io.netreduce.netswitch.engine.RingConfig;
import io.netreduce.netswitch.engine.SwitchCounters.Counter;
import io.netreduce.wire.roce.Bth;
import io.netreduce.wire.ina.InaHeader;
import io.netreduce.wire.roce.Psn;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.util.List;
import java.util.Random;

/**
 * End-to-end figure: a running switch (UDP data plane on loopback) and P hosts in one thread
 * that keep N messages in flight each and count result packets; reports aggregated packets
 * per second through the switch. Fault-free, so a kernel drop stalls the run and is reported.
 *
 * <p>Run: {@code mvn -pl netreduce-switch exec:exec -Dexec.classpathScope=test -Dexec.executable=java
 * -Dexec.args="-cp %classpath io.netreduce.netswitch.bench.UdpThroughput 4 3000 [WARMUP]"}
 */
public final class UdpThroughput {
    public static void main(String[] args) throws Exception {
        int p = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int messages = args.length > 1 ? Integer.parseInt(args[1]) : 3000;
        // The first messages warm up the JIT (Netty's and the engine's code) and are not measured.
        int warmup = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        int packetsPerMessage = 8;
        int mtu = 1024;
        int window = 4;
        int payload = packetsPerMessage * mtu - InaHeader.LENGTH;
        int net = (127 << 24) | (89 << 16);
        RingConfig c = new RingConfig(1, p, window, payload, mtu, InaHeader.DTYPE_FP32, ByteOrder.LITTLE_ENDIAN);
        try (SwitchServer server = SwitchServer.start(new InetSocketAddress(UdpRingHosts.inet(net | 100), 0),
                new InetSocketAddress("127.0.0.1", 0), 256L << 20)) {
            RingFixture f = RingFixture.onHosts(c, net | 10, 1);
            DatagramChannel[] ch = new DatagramChannel[p];
            for (int r = 0; r < p; r++) {
                ch[r] = DatagramChannel.open();
                ch[r].setOption(java.net.StandardSocketOptions.SO_RCVBUF, 8 << 20);
                ch[r].setOption(java.net.StandardSocketOptions.SO_SNDBUF, 8 << 20);
                ch[r].bind(new InetSocketAddress(UdpRingHosts.inet(f.ip[r]), 0));
                ch[r].configureBlocking(false);
                f.port[r] = ((InetSocketAddress) ch[r].getLocalAddress()).getPort();
            }
            var resp = new ControlClient(server.controlAddress()).request("POST", "/rings", ControlClient.ringJson(f));
            if (resp.statusCode() != 201) {
                throw new IllegalStateException(resp.body());
            }
            // Precraft every rank's stream (payload contents do not matter for throughput).
            Random rnd = new Random(1);
            byte[] body = f.randomPayload(rnd, payload);
            ByteBuffer[][] stream = new ByteBuffer[p][];
            for (int r = 0; r < p; r++) {
                stream[r] = new ByteBuffer[messages * packetsPerMessage];
                for (int m = 0; m < messages; m++) {
                    List<ByteBuffer> pk = f.message(r, m, body);
                    for (int j = 0; j < packetsPerMessage; j++) {
                        ByteBuffer d = ByteBuffer.allocateDirect(pk.get(j).capacity());
                        d.put(0, pk.get(j), 0, d.capacity());
                        stream[r][m * packetsPerMessage + j] = d;
                    }
                }
            }
            int[] sentPackets = new int[p];
            int[] receivedPackets = new int[p];
            ByteBuffer rx = ByteBuffer.allocateDirect(8192);
            Bth bth = new Bth();
            InetSocketAddress sw = server.dataAddress();
            java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
            long switchThread = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().equals(io.netreduce.netswitch.dataplane.DataPlane.THREAD_NAME)).findFirst().orElseThrow().getId();
            long cpu0 = mx.getThreadCpuTime(switchThread);
            long hostCpu0 = mx.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            long in0 = 0;
            boolean warm = warmup == 0;
            long deadline = t0 + 240_000_000_000L;
            int total = messages * packetsPerMessage;
            boolean done = false;
            while (!done && System.nanoTime() < deadline) {
                if (!warm && java.util.Arrays.stream(receivedPackets).min().orElse(0) >= warmup * packetsPerMessage) {
                    warm = true;
                    cpu0 = mx.getThreadCpuTime(switchThread);
                    hostCpu0 = mx.getCurrentThreadCpuTime();
                    t0 = System.nanoTime();
                    in0 = server.engine().counters().get(Counter.PACKETS_IN);
                }
                done = true;
                for (int r = 0; r < p; r++) {
                    // Window: message m may go once result m - N has fully arrived.
                    int allowed = Math.min(total, (receivedPackets[r] / packetsPerMessage + window) * packetsPerMessage);
                    while (sentPackets[r] < allowed) {
                        ByteBuffer d = stream[r][sentPackets[r]];
                        d.clear();
                        if (ch[r].send(d, sw) == 0) {
                            break;
                        }
                        sentPackets[r]++;
                    }
                    for (int k = 0; k < 64; k++) {
                        rx.clear();
                        if (ch[r].receive(rx) == null) {
                            break;
                        }
                        bth.wrap(rx, 0);
                        receivedPackets[r]++;
                    }
                    done &= receivedPackets[r] == total;
                }
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            double switchCpu = (mx.getThreadCpuTime(switchThread) - cpu0) / 1e9;
            double hostCpu = (mx.getCurrentThreadCpuTime() - hostCpu0) / 1e9;
            long in = server.engine().counters().get(Counter.PACKETS_IN) - in0;
            System.out.printf("P=%d, %d messages of %d x %d B (first %d not measured): %s in %.2f s; switch received %d packets "
                            + "(%.0f kpkt/s in, %.2f Gbit/s of payload in), aggregated %d, drops %d%n",
                    p, messages, packetsPerMessage, mtu, warmup, done ? "completed" : "STALLED", seconds, in, in / seconds / 1e3,
                    in * (double) mtu * 8 / seconds / 1e9, server.engine().counters().get(Counter.AGGREGATIONS_COMPLETED),
                    server.engine().counters().totalDrops());
            System.out.printf("switch data-plane thread CPU %.2f s (%.2f us per packet in, i.e. %.0f kpkt/s per core "
                    + "including the packets out); host thread CPU %.2f s; wall %.2f s%n", switchCpu,
                    switchCpu * 1e6 / in, in / switchCpu / 1e3, hostCpu, seconds);
            for (DatagramChannel d : ch) {
                d.close();
            }
        }
    }
}
