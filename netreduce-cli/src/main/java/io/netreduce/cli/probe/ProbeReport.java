package io.netreduce.cli.probe;

import java.util.List;
import java.util.Locale;

/** A probe's results: the perftest-style table, or (serialised as is) the --json document. */
record ProbeReport(String test, String transport, int mtu, int txDepth, List<Object> results) {
    private static final String RULE = "-".repeat(96);

    String table() {
        StringBuilder sb = new StringBuilder();
        sb.append(RULE).append('\n');
        sb.append(String.format(Locale.ROOT, " netreduce probe %s   transport: %s   MTU: %d%s%n", test, transport, mtu,
                test.equals("bw") ? "   tx depth: " + txDepth : ""));
        sb.append(RULE).append('\n');
        if (test.equals("bw")) {
            sb.append(String.format(Locale.ROOT, " %-10s %-13s %-19s %-22s %-14s%n",
                    "#bytes", "#iterations", "BW peak[MiB/sec]", "BW average[MiB/sec]", "MsgRate[Mpps]"));
            for (Object o : results) {
                ProbeClient.BwRow r = (ProbeClient.BwRow) o;
                sb.append(String.format(Locale.ROOT, " %-10d %-13d %-19.2f %-22.2f %-14.6f%n",
                        r.bytes(), r.iterations(), r.bwPeakMibPerSec(), r.bwAverageMibPerSec(), r.msgRateMpps()));
            }
        } else {
            sb.append(String.format(Locale.ROOT, " %-8s %-12s %-9s %-9s %-12s %-9s %-10s %-9s %-9s%n",
                    "#bytes", "#iterations", "t_min", "t_max", "t_typical", "t_avg", "t_stdev", "99%", "99.9%"));
            for (Object o : results) {
                ProbeClient.RttRow r = (ProbeClient.RttRow) o;
                sb.append(String.format(Locale.ROOT, " %-8d %-12d %-9.2f %-9.2f %-12.2f %-9.2f %-10.2f %-9.2f %-9.2f%n",
                        r.bytes(), r.iterations(), r.tMinUs(), r.tMaxUs(), r.tTypicalUs(), r.tAvgUs(), r.tStdevUs(),
                        r.t99Us(), r.t999Us()));
            }
            sb.append(" times in microseconds, whole round trips\n");
        }
        sb.append(RULE).append('\n');
        return sb.toString();
    }
}
