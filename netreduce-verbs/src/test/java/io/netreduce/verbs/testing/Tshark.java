package io.netreduce.verbs.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.abort;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs tshark on a capture with the InfiniBand payload heuristics off (they misread SEND
 * payloads as RPC-over-RDMA). Without tshark a test is skipped with the
 * reason, except under CI=true, where tshark is required and its absence fails the test.
 */
public final class Tshark {
    private Tshark() {
    }

    static final String[] HEURISTICS = {"rpcrdma_infiniband", "iser_infiniband", "smb_direct_infiniband",
        "smcr_infiniband", "nvme_rdma", "lnet_ib", "sdp_infiniband", "fc_infiniband", "eth_over_ib",
        "mellanox_eoib"};

    public static boolean available() {
        try {
            Process p = new ProcessBuilder("tshark", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    public static List<String> fields(Path pcap, String... fields) throws Exception {
        boolean ci = "true".equalsIgnoreCase(System.getenv("CI"));
        if (!available()) {
            if (ci) {
                throw new AssertionError("tshark is required in CI (apt-get install -y tshark)");
            }
            abort("skipped: tshark is not installed, so the capture cannot be decoded independently;"
                        + " install it (apt-get install -y tshark) to run this check, as CI does");
        }
        List<String> cmd = new ArrayList<>(List.of("tshark", "-n", "-r", pcap.toString(), "-T", "fields"));
        for (String h : HEURISTICS) {
            cmd.add("--disable-heuristic");
            cmd.add(h);
        }
        for (String f : fields) {
            cmd.add("-e");
            cmd.add(f);
        }
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("tshark did not finish in 30 s");
        }
        assertEquals(0, p.exitValue(), "tshark exit status; output: " + out);
        return out.lines().filter(l -> !l.isBlank()).toList();
    }
}
