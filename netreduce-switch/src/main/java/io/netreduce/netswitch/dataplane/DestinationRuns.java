package io.netreduce.netswitch.dataplane;

import io.netreduce.netswitch.engine.OutputBatch;
import io.netreduce.wire.udp.GsoLimits;

/**
 * Cuts an {@link OutputBatch} into runs for the socket: the datagrams grouped by
 * destination, keeping each destination's order, and each destination's datagrams cut into
 * runs that one UDP GSO send can carry (equal lengths, a shorter one only last, within
 * {@link GsoLimits}). A completion emits one packet to each of P distinct hosts, but a read
 * batch completes many packet positions, so each host is owed a run. Data-plane thread only;
 * nothing is allocated per batch once the arrays have grown to the batch's capacity.
 */
final class DestinationRuns {
    /** Receives each run: {@code run[0..length)} are indices into the batch. */
    interface Sink {
        void run(OutputBatch out, int[] run, int length, int segment, int bytes, int ip, int port);
    }

    private final int maxSegments;
    /** Per datagram of the batch being cut: already part of a run. */
    private boolean[] taken = new boolean[0];
    private final int[] run = new int[GsoLimits.MAX_SEGMENTS];

    /** @param gso cut runs for GSO; otherwise every datagram is a run of its own */
    DestinationRuns(boolean gso) {
        this.maxSegments = gso ? GsoLimits.MAX_SEGMENTS : 1;
    }

    /** Hands every datagram of {@code out} to {@code sink} in runs (does not clear the batch). */
    void cut(OutputBatch out, Sink sink) {
        int n = out.size();
        if (taken.length < n) {
            taken = new boolean[out.capacity()];
        }
        java.util.Arrays.fill(taken, 0, n, false);
        for (int first = 0; first < n; first++) {
            if (taken[first]) {
                continue;
            }
            int ip = out.ip(first);
            int port = out.port(first);
            int runLength = 0;
            int segment = 0;
            int bytes = 0;
            for (int i = first; i < n; i++) {
                if (taken[i] || out.ip(i) != ip || out.port(i) != port) {
                    continue;
                }
                taken[i] = true;
                int length = out.length(i);
                if (runLength > 0 && (length > segment || runLength == maxSegments
                        || !GsoLimits.fits(runLength, bytes, length))) {
                    sink.run(out, run, runLength, segment, bytes, ip, port);
                    runLength = 0;
                }
                if (runLength == 0) {
                    segment = length;
                    bytes = 0;
                }
                run[runLength++] = i;
                bytes += length;
                if (length < segment) {
                    // A shorter segment can only be the last of a GSO batch.
                    sink.run(out, run, runLength, segment, bytes, ip, port);
                    runLength = 0;
                }
            }
            if (runLength > 0) {
                sink.run(out, run, runLength, segment, bytes, ip, port);
            }
        }
    }
}
