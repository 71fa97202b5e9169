package io.netreduce.sim.engine;

import java.util.List;

/**
 * Weighted progressive filling: raise every unfrozen flow's rate together until some link is
 * full, freeze the flows crossing it at that rate, repeat. The result is the max-min fair
 * allocation: no flow can get more without taking from a flow that has no more than it.
 *
 * <p>A group's weight on a link counts how many of its flows share one instance of that link,
 * so a link's fair share is its residual capacity divided by the sum of the weights of the
 * unfrozen groups crossing it. Links of infinite capacity never constrain; a group crossing
 * only such links gets an infinite rate (it completes at once, paying only latency).
 */
final class MaxMinAllocator {

    private int epoch;
    private Link[] touched = new Link[16];
    private int touchedCount;

    /** Assigns {@code rate} (bytes per second per flow) to every transfer in {@code active}. */
    void allocate(List<Transfer> active) {
        epoch++;
        touchedCount = 0;
        int unfrozen = 0;
        for (int g = 0; g < active.size(); g++) {
            Transfer t = active.get(g);
            t.frozen = false;
            t.rate = Double.POSITIVE_INFINITY;
            Route r = t.route();
            boolean constrained = false;
            for (int h = 0; h < r.hops(); h++) {
                Link l = r.link(h);
                if (!l.isConstraining()) {
                    continue;
                }
                constrained = true;
                if (l.epoch != epoch) {
                    l.epoch = epoch;
                    l.residual = l.capacity();
                    l.unfrozenWeight = 0;
                    l.userCount = 0;
                    if (touchedCount == touched.length) {
                        touched = java.util.Arrays.copyOf(touched, touchedCount * 2);
                    }
                    touched[touchedCount++] = l;
                }
                l.unfrozenWeight += r.weight(h);
                l.addUser(g);
            }
            if (constrained) {
                unfrozen++;
            } else {
                t.frozen = true;
            }
        }
        while (unfrozen > 0) {
            Link bottleneck = null;
            double share = Double.POSITIVE_INFINITY;
            for (int i = 0; i < touchedCount; i++) {
                Link l = touched[i];
                if (l.unfrozenWeight > 0) {
                    double s = Math.max(0, l.residual) / l.unfrozenWeight;
                    if (s < share) {
                        share = s;
                        bottleneck = l;
                    }
                }
            }
            if (bottleneck == null) {
                throw new IllegalStateException("max-min allocation found unfrozen flows but no constraining link; this is a bug");
            }
            for (int u = 0; u < bottleneck.userCount; u++) {
                Transfer t = active.get(bottleneck.users[u]);
                if (t.frozen) {
                    continue;
                }
                t.frozen = true;
                t.rate = share;
                unfrozen--;
                Route r = t.route();
                for (int h = 0; h < r.hops(); h++) {
                    Link l = r.link(h);
                    if (l.isConstraining()) {
                        l.residual -= share * r.weight(h);
                        l.unfrozenWeight -= r.weight(h);
                    }
                }
            }
            // Guard against float residue keeping an emptied link "unfrozen" forever.
            bottleneck.unfrozenWeight = 0;
        }
    }
}
