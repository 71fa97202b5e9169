package io.netreduce.cli.allreduce;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One table row: every rank's results for one (algorithm, size, placement) combined as
 * nccl-tests does: time averaged over ranks, #wrong summed over ranks; and the CPU a rank's
 * process spent per call (mean over ranks) and per GB of tensor, the efficiency figure
 * that does not depend on the machine's other load; and every transport counter that moved,
 * summed over ranks (RNR NAKs, sequence NAKs, tail probes, out-of-sequence drops...). For
 * netreduce, the switch data plane's CPU per call and per GB beside the ranks' (null, and left
 * out of the JSON, for other algorithms or where the switch's metrics cannot be read). The
 * median and 99th percentile of one call's time (each rank's, averaged over ranks) where the
 * calls were timed one by one: a tail that the mean hides, such as a rank that lost its core.
 */
public record Row(String algorithm, long size, long count, String type, String redop, boolean inPlace,
                  int iterations, double timeUs, double algbwGbps, double busbwGbps, long wrong, long wireBytesPerWorker,
                  long retransmittedPackets, long ackTimeouts, @JsonProperty("cpu_s_per_call") double cpuSPerCall,
                  @JsonProperty("cpu_s_per_gb") double cpuSPerGb, Map<String, Long> transportCounters,
                  @JsonProperty("switch_cpu_s_per_call") @JsonInclude(JsonInclude.Include.NON_NULL)
                  Double switchCpuSPerCall,
                  @JsonProperty("switch_cpu_s_per_gb") @JsonInclude(JsonInclude.Include.NON_NULL)
                  Double switchCpuSPerGb,
                  @JsonProperty("time_p50_us") @JsonInclude(JsonInclude.Include.NON_NULL) Double timeP50Us,
                  @JsonProperty("time_p99_us") @JsonInclude(JsonInclude.Include.NON_NULL) Double timeP99Us) {

    /** Without the switch's CPU. */
    public Row(String algorithm, long size, long count, String type, String redop, boolean inPlace, int iterations,
               double timeUs, double algbwGbps, double busbwGbps, long wrong, long wireBytesPerWorker,
               long retransmittedPackets, long ackTimeouts, double cpuSPerCall, double cpuSPerGb,
               Map<String, Long> transportCounters) {
        this(algorithm, size, count, type, redop, inPlace, iterations, timeUs, algbwGbps, busbwGbps, wrong,
                wireBytesPerWorker, retransmittedPackets, ackTimeouts, cpuSPerCall, cpuSPerGb, transportCounters,
                null, null, null, null);
    }

    /** This row with the switch's CPU per call and per GB, from seconds per call; unchanged when that is unknown (NaN). */
    public Row withSwitchCpu(double secondsPerCall) {
        if (Double.isNaN(secondsPerCall)) {
            return this;
        }
        return new Row(algorithm, size, count, type, redop, inPlace, iterations, timeUs, algbwGbps, busbwGbps, wrong,
                wireBytesPerWorker, retransmittedPackets, ackTimeouts, cpuSPerCall, cpuSPerGb, transportCounters,
                secondsPerCall, perGb(secondsPerCall, size), timeP50Us, timeP99Us);
    }

    /** This row with the median and 99th percentile of one call's time, µs; unchanged when they are unknown (NaN). */
    public Row withCallTimes(double p50Us, double p99Us) {
        if (Double.isNaN(p50Us) || Double.isNaN(p99Us)) {
            return this;
        }
        return new Row(algorithm, size, count, type, redop, inPlace, iterations, timeUs, algbwGbps, busbwGbps, wrong,
                wireBytesPerWorker, retransmittedPackets, ackTimeouts, cpuSPerCall, cpuSPerGb, transportCounters,
                switchCpuSPerCall, switchCpuSPerGb, p50Us, p99Us);
    }

    /** Without transport counters. */
    public Row(String algorithm, long size, long count, String type, String redop, boolean inPlace, int iterations,
               double timeUs, double algbwGbps, double busbwGbps, long wrong, long wireBytesPerWorker,
               long retransmittedPackets, long ackTimeouts, double cpuSPerCall, double cpuSPerGb) {
        this(algorithm, size, count, type, redop, inPlace, iterations, timeUs, algbwGbps, busbwGbps, wrong,
                wireBytesPerWorker, retransmittedPackets, ackTimeouts, cpuSPerCall, cpuSPerGb, Map.of());
    }

    /**
     * Bus bandwidth as nccl-tests defines it for all-reduce, for every algorithm:
     * busbw = algbw × 2(P−1)/P. For "netreduce" this is an equivalent-ring figure, so the
     * column compares algorithms like for like; each worker actually sends only about the
     * tensor size once, which the wire-bytes column shows.
     */
    public static double busBandwidthFactor(int ranks) {
        return ranks <= 1 ? 1.0 : 2.0 * (ranks - 1) / ranks;
    }

    /** CPU seconds per GB (10^9 bytes) of tensor, from CPU seconds per call on {@code bytes}. */
    public static double perGb(double cpuSecondsPerCall, long bytes) {
        return bytes > 0 ? cpuSecondsPerCall / (bytes / 1e9) : Double.NaN;
    }

    static Row combine(List<RankResult> ranks, int worldSize) {
        RankResult first = ranks.get(0);
        double time = ranks.stream().mapToDouble(RankResult::timeUs).average().orElse(Double.NaN);
        long wrong = ranks.stream().mapToLong(RankResult::wrong).sum();
        long wire = Math.round(ranks.stream().mapToLong(RankResult::wireBytesSent).average().orElse(0));
        long retrans = ranks.stream().mapToLong(RankResult::retransmittedPackets).sum();
        long timeouts = ranks.stream().mapToLong(RankResult::ackTimeouts).sum();
        double cpu = ranks.stream().mapToDouble(RankResult::cpuSeconds).average().orElse(Double.NaN);
        double algbw = time > 0 ? first.bytes() / (time * 1e3) : 0; // bytes per ns = GB/s
        Map<String, Long> counters = new TreeMap<>();
        for (RankResult r : ranks) {
            r.transportCounters().forEach((name, n) -> counters.merge(name, n, Long::sum));
        }
        double switchCpu = ranks.stream().mapToDouble(RankResult::switchCpuSeconds).filter(x -> !Double.isNaN(x))
                .findFirst().orElse(Double.NaN);
        return new Row(first.algorithm(), first.bytes(), first.count(), "float", "sum", first.inPlace(),
                first.iterations(), time,
                algbw, algbw * busBandwidthFactor(worldSize), wrong, wire, retrans, timeouts, cpu, perGb(cpu, first.bytes()),
                counters).withSwitchCpu(switchCpu).withCallTimes(
                        ranks.stream().mapToDouble(RankResult::timeP50Us).average().orElse(Double.NaN),
                        ranks.stream().mapToDouble(RankResult::timeP99Us).average().orElse(Double.NaN));
    }
}
