package io.netreduce.cli.probe;

import io.netreduce.cli.Addresses;
import io.netreduce.cli.CliException;
import io.netreduce.cli.Sizes;
import io.netreduce.verbs.Counter;
import io.netreduce.verbs.QpEndpoint;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.SendOpcode;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.WorkCompletion;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/** The active side of a probe: connects, drives every size, measures, returns the report. */
final class ProbeClient {
    private final ProbeParameters params;
    private final InetSocketAddress serverAt;
    private final InetSocketAddress deviceAt;
    private final PrintWriter progress;

    ProbeClient(ProbeParameters params, InetSocketAddress serverAt, InetSocketAddress deviceAt, PrintWriter progress) {
        this.params = params;
        this.serverAt = serverAt;
        this.deviceAt = deviceAt;
        this.progress = progress;
    }

    /** Seeded, non-constant payload (constant pages are merged by the kernel and distort timing). */
    static byte[] pattern(long seed, int size) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    ProbeReport run() throws IOException, InterruptedException {
        int maxSize = (int) params.maxSize();
        long seed = System.nanoTime();
        Socket socket = new Socket();
        try {
            socket.connect(serverAt, (int) Math.min(params.timeout().toMillis(), 10_000));
        } catch (ConnectException e) {
            socket.close();
            throw new CliException("cannot reach a probe server at " + Addresses.format(serverAt)
                    + ": connection refused (is `netreduce probe " + params.kind().wireName() + "` running there?)", e);
        } catch (IOException e) {
            socket.close();
            throw new CliException("cannot reach a probe server at " + Addresses.format(serverAt) + ": "
                    + e.getMessage(), e);
        }
        try (SideChannel channel = new SideChannel(socket, params.timeout());
             // The client waits on its completion queue for every write or message (perftest's client
             // busy-polls): the transport may move its data on this thread.
             VerbsSide side = VerbsSide.open(params.transport(), deviceAt, params.mtu(), maxSize, true)) {
            side.mr.buffer().put(0, pattern(seed, maxSize));
            channel.send("HELLO", "version", 1, "test", params.kind().wireName(), "transport", params.transport(),
                    "mtu", params.mtu(), "max_size", maxSize, "seed", seed, "endpoint", side.qp.localEndpoint());
            SideChannel.Message welcome = channel.expect("WELCOME");
            QpEndpoint serverEndpoint = QpEndpoint.parse(welcome.get("endpoint"));
            long remoteAddress = welcome.getLong("addr");
            int rkey = (int) welcome.getLong("rkey");
            side.connect(serverEndpoint, params.timeout());
            RecvRequest recv = new RecvRequest(1);
            if (params.kind() == ProbeKind.RTT) {
                recv.sgl().add(side.mr, 0, side.mr.length());
                side.qp.postRecv(recv);
            }
            List<Object> rows = new ArrayList<>();
            for (long size : params.sizes()) {
                progress.println("probe " + params.kind().wireName() + ": " + Sizes.human(size) + " x "
                        + params.iterations());
                progress.flush();
                channel.send("RUN", "size", size, "iters", params.iterations(), "warmup", params.warmup());
                channel.expect("READY");
                long retransmitsBefore = side.qp.counters().get(Counter.RETRANSMITTED_PACKETS);
                if (params.kind() == ProbeKind.BW) {
                    BwRow row = bandwidth(side, (int) size, remoteAddress, rkey, retransmitsBefore);
                    channel.send("CHECK", "size", size);
                    channel.expect("CHECKED");
                    rows.add(row);
                } else {
                    rows.add(roundTrips(side, recv, (int) size, retransmitsBefore));
                    channel.expect("ECHOED");
                }
            }
            channel.send("BYE");
            return new ProbeReport(params.kind().wireName(), params.transport(), params.mtu(),
                    params.kind() == ProbeKind.BW ? params.txDepth() : 1, rows);
        }
    }

    /** ib_write_bw's loop: keep txDepth writes in flight, time every completion. */
    private BwRow bandwidth(VerbsSide side, int size, long remoteAddress, int rkey, long retransmitsBefore)
            throws InterruptedException {
        int warmup = params.warmup();
        int total = warmup + params.iterations();
        long[] completedAt = new long[params.iterations()];
        WorkCompletion[] wcs = Completions.array(64);
        SendRequest write = new SendRequest(1);
        long deadline = System.nanoTime() + params.timeout().toNanos();
        int posted = 0;
        int completed = 0;
        long start = 0;
        while (completed < total) {
            while (posted < total && posted - completed < params.txDepth()) {
                if (posted == warmup) {
                    // Measure from the first measured post, once the warm-up writes are done.
                    while (completed < warmup) {
                        completed += Completions.await(side.sendCq, wcs, deadline, "RDMA WRITE " + completed);
                    }
                    start = System.nanoTime();
                }
                write.reset().wrId(posted).opcode(SendOpcode.RDMA_WRITE).remote(remoteAddress, rkey)
                        .sgl().add(side.mr, 0, size);
                side.qp.postSend(write);
                posted++;
            }
            int n = Completions.await(side.sendCq, wcs, deadline, "RDMA WRITE " + completed);
            long now = System.nanoTime();
            for (int i = 0; i < n; i++) {
                if (completed >= warmup) {
                    completedAt[completed - warmup] = now;
                }
                completed++;
            }
        }
        long elapsed = completedAt[completedAt.length - 1] - start;
        double avgMiBps = (double) size * params.iterations() / (elapsed / 1e9) / (1 << 20);
        int window = Math.min(params.txDepth(), params.iterations() - 1);
        double peakMiBps = avgMiBps;
        if (window >= 1) {
            long best = Long.MAX_VALUE;
            for (int i = window; i < completedAt.length; i++) {
                best = Math.min(best, completedAt[i] - completedAt[i - window]);
            }
            if (best > 0) {
                peakMiBps = Math.max(avgMiBps, (double) size * window / (best / 1e9) / (1 << 20));
            }
        }
        double msgRate = params.iterations() / (elapsed / 1e3) ; // messages per µs = Mpps
        return new BwRow(size, params.iterations(), peakMiBps, avgMiBps, msgRate,
                side.qp.counters().get(Counter.RETRANSMITTED_PACKETS) - retransmitsBefore);
    }

    /** ib_send_lat's loop: SEND, wait for the answering SEND, repeat. */
    private RttRow roundTrips(VerbsSide side, RecvRequest recv, int size, long retransmitsBefore)
            throws InterruptedException {
        int warmup = params.warmup();
        int total = warmup + params.iterations();
        long[] rtt = new long[params.iterations()];
        WorkCompletion[] wcs = Completions.array(16);
        SendRequest send = new SendRequest(1);
        long deadline = System.nanoTime() + params.timeout().toNanos();
        int unacked = 0;
        for (int i = 0; i < total; i++) {
            send.reset().wrId(i).sgl().add(side.mr, 0, size);
            long t0 = System.nanoTime();
            side.qp.postSend(send);
            Completions.await(side.recvCq, wcs, deadline, "pong " + i);
            long t1 = System.nanoTime();
            if (i >= warmup) {
                rtt[i - warmup] = t1 - t0;
            }
            if (wcs[0].byteLength() != size) {
                throw new CliException("pong " + i + " carried " + wcs[0].byteLength() + " bytes, expected " + size);
            }
            recv.reset().sgl().add(side.mr, 0, side.mr.length());
            side.qp.postRecv(recv);
            unacked++;
            unacked -= Completions.drain(side.sendCq, wcs, "ping");
            while (unacked > VerbsSide.QUEUE_DEPTH / 2) {
                unacked -= Completions.await(side.sendCq, wcs, deadline, "ping completion");
            }
        }
        while (unacked > 0) {
            unacked -= Completions.await(side.sendCq, wcs, deadline, "ping completion");
        }
        return RttRow.of(size, rtt, side.qp.counters().get(Counter.RETRANSMITTED_PACKETS) - retransmitsBefore);
    }

    /** One bw table row. */
    record BwRow(long bytes, int iterations, double bwPeakMibPerSec, double bwAverageMibPerSec,
                 double msgRateMpps, long retransmittedPackets) {
    }

    /** One rtt table row, times in microseconds. */
    record RttRow(long bytes, int iterations, double tMinUs, double tMaxUs, double tTypicalUs, double tAvgUs,
                  double tStdevUs, double t99Us, double t999Us, long retransmittedPackets) {
        static RttRow of(long bytes, long[] nanos, long retransmits) {
            long[] s = nanos.clone();
            Arrays.sort(s);
            double sum = 0;
            for (long v : s) {
                sum += v;
            }
            double avg = sum / s.length;
            double var = 0;
            for (long v : s) {
                var += (v - avg) * (v - avg);
            }
            double stdev = Math.sqrt(var / s.length);
            return new RttRow(bytes, s.length, s[0] / 1e3, s[s.length - 1] / 1e3, s[s.length / 2] / 1e3,
                    avg / 1e3, stdev / 1e3, percentile(s, 0.99) / 1e3, percentile(s, 0.999) / 1e3, retransmits);
        }

        private static double percentile(long[] sorted, double p) {
            int i = (int) Math.ceil(p * sorted.length) - 1;
            return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
        }
    }
}
