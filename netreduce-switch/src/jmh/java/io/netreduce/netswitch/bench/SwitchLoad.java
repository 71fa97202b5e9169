package io.netreduce.netswitch.bench;

import io.netreduce.netswitch.ControlClient;
import io.netreduce.netswitch.RingFixture;
import io.netreduce.netswitch.engine.RingConfig;
import io.netreduce.wire.ina.InaHeader;
import java.io.BufferedReader;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;

/**
 * The switch's data plane end to end, driven from other processes: a running switch
 * ({@code netreduce switch}, its own JVM) gets two rings registered through its control
 * plane, one to warm it up and one to measure; this program crafts each ring's P streams of
 * RoCEv2 SEND datagrams (INA header, PSNs, ICRC, exactly as hosts' NICs send them) into a
 * file, and {@code bench/switch_load.c}, a C program, plays them against the switch's socket:
 * every rank keeps N messages in flight, sends each message as one UDP GSO batch and receives
 * results with GRO, no ACKs (the switch needs none to aggregate). The switch's own counters
 * (packets in, its data-plane thread's CPU) before and after the measured ring give packets
 * per second per core of the data plane: datagrams in through its socket, aggregated, and
 * out through its socket.
 *
 * <p>Run (the switch first): {@code netreduce switch --data 127.0.89.100:4791 --control
 * 127.0.0.1:7111 &} then {@code mvn -pl netreduce-switch exec:exec -Dexec.classpathScope=test
 * -Dexec.executable=java -Dexec.args="-cp %classpath io.netreduce.netswitch.bench.SwitchLoad
 * http://127.0.0.1:7111 127.0.89.100:4791 bench/target/switch_load 4 20000 1024"}
 * (arguments: control URL, data address, the compiled C program, P, measured messages,
 * packet payload bytes, packets per message). A rank sends each message in GSO batches as
 * full as UDP allows: 8 packets by default (one batch); with 64 (about 60 of 1 KiB fill a
 * batch) the batches are as full as those of netreduce's hosts, whose 256 KiB messages
 * span 64 packets or more, and the switch handles more packets per wake-up.
 */
public final class SwitchLoad {
    private static final int DEFAULT_PACKETS_PER_MESSAGE = 8;
    private static final int WINDOW = 4;

    private SwitchLoad() {
    }

    public static void main(String[] args) throws Exception {
        URI control = URI.create(args[0]);
        String[] data = args[1].split(":");
        InetSocketAddress sw = new InetSocketAddress(data[0], Integer.parseInt(data[1]));
        Path program = Path.of(args[2]);
        int p = args.length > 3 ? Integer.parseInt(args[3]) : 4;
        int messages = args.length > 4 ? Integer.parseInt(args[4]) : 20_000;
        int mtu = args.length > 5 ? Integer.parseInt(args[5]) : 1024;
        int perMessage = args.length > 6 ? Integer.parseInt(args[6]) : DEFAULT_PACKETS_PER_MESSAGE;
        ControlClient client = new ControlClient(new InetSocketAddress(control.getHost(), control.getPort()));
        Path dir = Files.createTempDirectory("switch-load");
        try {
            Path warm = craft(client, sw, dir.resolve("warm.bin"), 1, p, Math.max(2000, messages / 4), mtu, perMessage,
                    (127 << 24) | (90 << 16) | 10);
            Path measured = craft(client, sw, dir.resolve("measured.bin"), 2, p, messages, mtu, perMessage,
                    (127 << 24) | (91 << 16) | 10);
            play(program, warm);
            String before = client.request("GET", "/metrics", null).body();
            String out = play(program, measured);
            String after = client.request("GET", "/metrics", null).body();
            long in = metric(after, "netreduce_switch_packets_in_total") - metric(before, "netreduce_switch_packets_in_total");
            double cpu = cpu(after) - cpu(before);
            System.out.println(out.trim());
            System.out.printf("switch: %d packets in, data-plane thread CPU %.3f s: %.2f us per packet in, "
                    + "%.0f kpkt/s per core (P=%d, %d B payload, messages of %d packets, window %d)%n", in, cpu,
                    cpu * 1e6 / in, in / cpu / 1e3, p, mtu, perMessage, WINDOW);
        } finally {
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.delete(f);
                }
            }
            Files.delete(dir);
            client.request("DELETE", "/rings/1", null);
            client.request("DELETE", "/rings/2", null);
        }
    }

    private static long metric(String page, String name) {
        return ControlClient.metric(page, name);
    }

    private static double cpu(String page) {
        for (String line : page.split("\n")) {
            if (line.startsWith("netreduce_switch_dataplane_cpu_seconds_total ")) {
                return Double.parseDouble(line.substring(line.indexOf(' ') + 1));
            }
        }
        throw new IllegalStateException("the switch reports no data-plane CPU");
    }

    /**
     * Registers ring {@code ringId} with hosts at consecutive addresses from {@code firstIp}
     * (ports 40000 + r) and writes its streams: little-endian ints P, messages, packets per
     * message, window, switch address, switch port; per rank its address and port; then per
     * rank every datagram as its length and bytes.
     */
    private static Path craft(ControlClient client, InetSocketAddress sw, Path file, int ringId, int p, int messages,
                              int mtu, int perMessage, int firstIp) throws IOException {
        int payload = perMessage * mtu - InaHeader.LENGTH;
        RingConfig c = new RingConfig(ringId, p, WINDOW, payload, mtu, InaHeader.DTYPE_FP32, ByteOrder.LITTLE_ENDIAN);
        RingFixture f = RingFixture.onHosts(c, firstIp, ringId);
        for (int r = 0; r < p; r++) {
            f.port[r] = 40_000 + r;
        }
        var resp = client.request("POST", "/rings", ControlClient.ringJson(f));
        if (resp.statusCode() != 201) {
            throw new IllegalStateException("the switch refused ring " + ringId + ": " + resp.body());
        }
        byte[] body = f.randomPayload(new Random(ringId), payload);
        try (OutputStream os = Files.newOutputStream(file);
             DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(os, 1 << 20))) {
            int sip = io.netreduce.wire.roce.Ipv4UdpHeader.toInt(sw.getAddress());
            for (int v : new int[] {p, messages, perMessage, WINDOW, sip, sw.getPort()}) {
                out.writeInt(Integer.reverseBytes(v));
            }
            for (int r = 0; r < p; r++) {
                out.writeInt(Integer.reverseBytes(f.ip[r]));
                out.writeInt(Integer.reverseBytes(f.port[r]));
            }
            for (int r = 0; r < p; r++) {
                for (int m = 0; m < messages; m++) {
                    List<ByteBuffer> packets = f.message(r, m, body);
                    for (ByteBuffer d : packets) {
                        out.writeInt(Integer.reverseBytes(d.capacity()));
                        out.write(d.array(), d.arrayOffset(), d.capacity());
                    }
                }
            }
        }
        return file;
    }

    private static String play(Path program, Path stream) throws IOException, InterruptedException {
        Process proc = new ProcessBuilder(program.toString(), stream.toString()).redirectErrorStream(true).start();
        String out;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8))) {
            out = String.join("\n", r.lines().toList());
        }
        if (proc.waitFor() != 0) {
            throw new IllegalStateException(program + " failed: " + out);
        }
        return out;
    }
}
