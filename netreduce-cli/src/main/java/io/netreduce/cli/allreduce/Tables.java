package io.netreduce.cli.allreduce;

import java.util.List;
import java.util.Locale;

/**
 * nccl-tests-style tables (GB/s = 10^9 bytes per second, times in µs), with a CPU column:
 * the rank process's CPU per call, or per GB of tensor.
 */
public final class Tables {
    private Tables() {
    }

    /** The demo's table for one algorithm: one placement, plus the bytes each worker sent. */
    public static String demo(String title, List<Row> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append("# ").append(title).append('\n');
        sb.append(String.format(Locale.ROOT, "#%11s %13s %6s %10s %8s %8s %10s %9s %14s %7s%n",
                "size", "count", "type", "time", "algbw", "busbw", "cpu", "cpu", "wire sent", "#wrong"));
        sb.append(String.format(Locale.ROOT, "#%11s %13s %6s %10s %8s %8s %10s %9s %14s %7s%n",
                "(B)", "(elements)", "", "(us)", "(GB/s)", "(GB/s)", "(us/rank)", "(s/GB)", "(B/worker)", ""));
        for (Row r : rows) {
            sb.append(String.format(Locale.ROOT, " %11d %13d %6s %10.1f %8.3f %8.3f %10.1f %9.3f %14d %7d%n",
                    r.size(), r.count(), r.type(), r.timeUs(), r.algbwGbps(), r.busbwGbps(), r.cpuSPerCall() * 1e6,
                    r.cpuSPerGb(), r.wireBytesPerWorker(), r.wrong()));
        }
        return sb.toString();
    }

    /** all_reduce_perf's table: out-of-place and in-place columns side by side. */
    public static String bench(List<Row> outOfPlace, List<Row> inPlace) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "#%80s%42s%n", "out-of-place", "in-place"));
        sb.append(String.format(Locale.ROOT,
                "#%11s %13s %6s %6s %6s %10s %7s %7s %7s %6s %10s %7s %7s %7s %6s%n",
                "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "cpu", "#wrong",
                "time", "algbw", "busbw", "cpu", "#wrong"));
        sb.append(String.format(Locale.ROOT,
                "#%11s %13s %6s %6s %6s %10s %7s %7s %7s %6s %10s %7s %7s %7s %6s%n",
                "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "(s/GB)", "", "(us)", "(GB/s)", "(GB/s)",
                "(s/GB)", ""));
        for (int i = 0; i < outOfPlace.size(); i++) {
            Row o = outOfPlace.get(i);
            Row p = i < inPlace.size() ? inPlace.get(i) : null;
            sb.append(String.format(Locale.ROOT, " %11d %13d %6s %6s %6d %10.1f %7.3f %7.3f %7.3f %6d",
                    o.size(), o.count(), o.type(), o.redop(), -1, o.timeUs(), o.algbwGbps(), o.busbwGbps(),
                    o.cpuSPerGb(), o.wrong()));
            if (p != null) {
                sb.append(String.format(Locale.ROOT, " %10.1f %7.3f %7.3f %7.3f %6d",
                        p.timeUs(), p.algbwGbps(), p.busbwGbps(), p.cpuSPerGb(), p.wrong()));
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    /**
     * Algorithm {@code a} against {@code b} measured in the same run, per size and placement:
     * busbw and the ranks' CPU per GB as ratios a/b, and a's switch CPU per GB where it has
     * one (the ranks' column never includes it). Rows of either algorithm without a partner
     * at the same size and placement are left out.
     */
    public static String against(String a, String b, List<Row> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append("# ").append(a).append(" against ").append(b).append(", same run:\n");
        sb.append(String.format(Locale.ROOT, "#%11s %13s %8s %8s %12s%n", "size", "placement", "busbw", "cpu/GB",
                "switch"));
        sb.append(String.format(Locale.ROOT, "#%11s %13s %8s %8s %12s%n", "(B)", "", "(x)", "(x)", "(s/GB)"));
        for (Row x : rows) {
            if (!x.algorithm().equals(a)) {
                continue;
            }
            Row y = rows.stream().filter(r -> r.algorithm().equals(b) && r.size() == x.size()
                    && r.inPlace() == x.inPlace()).findFirst().orElse(null);
            if (y == null) {
                continue;
            }
            sb.append(String.format(Locale.ROOT, " %11d %13s %8.2f %8.2f %12s%n", x.size(),
                    x.inPlace() ? "in-place" : "out-of-place", x.busbwGbps() / y.busbwGbps(),
                    x.cpuSPerGb() / y.cpuSPerGb(), x.switchCpuSPerGb() == null ? "-"
                            : String.format(Locale.ROOT, "%.3f", x.switchCpuSPerGb())));
        }
        return sb.toString();
    }

    /** Mean busbw over every row of both placements, as all_reduce_perf's footer. */
    public static double averageBusBandwidth(List<Row> rows) {
        return rows.stream().mapToDouble(Row::busbwGbps).average().orElse(0);
    }
}
