package io.netreduce.verbs.tcp;

import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.ScatterGatherList;
import java.nio.ByteBuffer;

/** One receive-queue entry with its scattering-read vector (views cached as in {@link TcpSendSlot}). */
final class TcpRecvSlot {
    final ScatterGatherList sgl;
    final ByteBuffer[] iov;
    final TcpMemoryRegion[] viewRegions;
    long wrId;
    long capacity;

    TcpRecvSlot(int maxSge) {
        sgl = new ScatterGatherList(maxSge);
        iov = new ByteBuffer[maxSge];
        viewRegions = new TcpMemoryRegion[maxSge];
    }

    void fill(RecvRequest r, long total) {
        wrId = r.wrId();
        capacity = total;
        sgl.copyFrom(r.sgl());
    }

    /** Points the vector at the first {@code length} bytes of the SGEs; returns how many buffers it uses. Reader thread only. */
    int prepareScatter(int length) {
        int left = length;
        int n = 0;
        for (int i = 0; i < sgl.count() && left > 0; i++) {
            TcpMemoryRegion mr = (TcpMemoryRegion) sgl.region(i);
            if (viewRegions[i] != mr) {
                viewRegions[i] = mr;
                iov[i] = mr.newView();
            }
            int take = Math.min(left, sgl.length(i));
            int offset = sgl.offset(i);
            iov[i].limit(offset + take).position(offset);
            left -= take;
            n = i + 1;
        }
        return n;
    }
}
