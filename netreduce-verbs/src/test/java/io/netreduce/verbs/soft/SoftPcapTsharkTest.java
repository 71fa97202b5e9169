package io.netreduce.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netreduce.verbs.DeviceOptions;
import io.netreduce.wire.roce.Icrc;
import io.netreduce.wire.roce.Opcode;
import io.netreduce.wire.roce.PcapWriter;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Captures the provider's own traffic through the device pcap tap and checks it
 * independently: tshark must decode every frame as RoCE (InfiniBand BTH) with the expected
 * opcodes and no malformed packet or expert warning, and every ICRC in the capture must
 * verify against the frame's own IPv4/UDP header. Skipped without tshark unless CI=true.
 */
class SoftPcapTsharkTest {
    /** Payload heuristics that would misread SEND payloads (tshark tries RPC-over-RDMA and others on them). */
    private static final String[] HEURISTICS = {"rpcrdma_infiniband", "iser_infiniband", "smb_direct_infiniband",
        "smcr_infiniband", "nvme_rdma", "lnet_ib", "sdp_infiniband", "fc_infiniband", "eth_over_ib", "mellanox_eoib"};

    @TempDir
    Path dir;

    private static String tshark() {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(d, "tshark");
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        if ("true".equals(System.getenv("CI"))) {
            fail("tshark is not installed, and CI=true requires this test to run (apt-get install -y tshark)");
        }
        Assumptions.abort("tshark is not installed (apt-get install -y tshark); set CI=true to make this a failure");
        return null;
    }

    private List<String> run(List<String> cmd) throws IOException, InterruptedException {
        // stderr apart: tshark warns there (e.g. about running as root), stdout is the data.
        Path err = Files.createTempFile(dir, "tshark", ".err");
        Path outFile = Files.createTempFile(dir, "tshark", ".out");
        Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).redirectOutput(outFile.toFile()).start();
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                fail("tshark did not finish within 60 s: " + cmd);
            }
            String out = Files.readString(outFile, StandardCharsets.UTF_8);
            assertEquals(0, p.exitValue(), "tshark failed: " + cmd + "\n" + out + Files.readString(err));
            List<String> lines = new ArrayList<>();
            for (String l : out.split("\n")) {
                if (!l.isBlank()) {
                    lines.add(l.strip());
                }
            }
            return lines;
        } finally {
            p.destroyForcibly();
        }
    }

    private static List<String> tsharkCmd(String tshark, Path pcap, String... args) {
        List<String> cmd = new ArrayList<>(List.of(tshark, "-n", "-r", pcap.toString()));
        for (String h : HEURISTICS) {
            cmd.add("--disable-heuristic");
            cmd.add(h);
        }
        cmd.addAll(List.of(args));
        return cmd;
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void tsharkDecodesEveryCapturedFrameAndEveryIcrcVerifies() throws Exception {
        String tshark = tshark();
        Path pa = dir.resolve("a.pcap");
        Path pb = dir.resolve("b.pcap");
        long frames;
        try (SoftPair pair = new SoftPair(
                DeviceOptions.builder().localAddress("127.0.33.1").property("soft.pcap", pa.toString()),
                DeviceOptions.builder().localAddress("127.0.33.2").property("soft.pcap", pb.toString()),
                q -> q.mtu(1024).ackTimeout(Duration.ofMillis(500)))) {
            Transfer t = new Transfer(pair, 31, 3 * 1024 + 50);
            t.run(600_000, Duration.ofSeconds(60));
        }
        TreeSet<Integer> opcodes = new TreeSet<>();
        frames = 0;
        for (Path p : List.of(pa, pb)) {
            int n = verifyIcrcs(p);
            frames += n;
            List<String> decoded = run(tsharkCmd(tshark, p, "-T", "fields", "-e", "infiniband.bth.opcode"));
            assertEquals(n, decoded.size(), "tshark lists every frame of " + p);
            for (String op : decoded) {
                assertTrue(!op.isEmpty(), "frame without a BTH in " + p + ": " + decoded);
                opcodes.add(Integer.decode(op.contains(",") ? op.substring(0, op.indexOf(',')) : op));
            }
            List<String> bad = run(tsharkCmd(tshark, p, "-Y", "_ws.malformed || _ws.expert.severity >= warning"));
            assertEquals(List.of(), bad, "malformed frames or expert warnings in " + p);
            List<String> roce = run(tsharkCmd(tshark, p, "-Y", "infiniband.bth"));
            assertEquals(n, roce.size(), "every frame of " + p + " is RoCE");
        }
        for (int op : new int[] {Opcode.SEND_FIRST, Opcode.SEND_MIDDLE, Opcode.SEND_LAST, Opcode.SEND_ONLY,
            Opcode.SEND_ONLY_WITH_IMMEDIATE, Opcode.RDMA_WRITE_FIRST, Opcode.RDMA_WRITE_LAST_WITH_IMMEDIATE,
            Opcode.RDMA_WRITE_ONLY_WITH_IMMEDIATE, Opcode.ACKNOWLEDGE}) {
            assertTrue(opcodes.contains(op), "opcode " + Opcode.name(op) + " captured; saw " + opcodes);
        }
        for (int op : opcodes) {
            assertTrue(Opcode.isKnown(op), "unexpected opcode 0x" + Integer.toHexString(op));
        }
        assertTrue(frames > 500, "captured " + frames + " frames");
    }

    /** Reads a pcap written by {@link PcapWriter} and checks the ICRC of every frame; returns the frame count. */
    private static int verifyIcrcs(Path pcap) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(pcap)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(PcapWriter.MAGIC_NANOS, b.getInt(0));
        assertEquals(PcapWriter.LINKTYPE_ETHERNET, b.getInt(20));
        Icrc icrc = new Icrc();
        int at = 24;
        int n = 0;
        while (at < b.limit()) {
            int captured = b.getInt(at + 8);
            int ip = at + 16 + PcapWriter.ETHERNET_HEADER_LENGTH;
            int ipLength = captured - PcapWriter.ETHERNET_HEADER_LENGTH;
            ByteBuffer be = b.duplicate().order(ByteOrder.BIG_ENDIAN);
            int expected = icrc.computeFromIpv4(be, ip, ipLength);
            assertEquals(expected, Icrc.load(be, ip + ipLength - Icrc.LENGTH), "ICRC of frame " + (n + 1) + " in " + pcap);
            at += 16 + captured;
            n++;
        }
        return n;
    }
}
