package io.netreduce.verbs.soft;

import io.netreduce.verbs.FaultPlan;
import java.util.SplittableRandom;

/**
 * Draws seeded fault decisions for one direction of a device's traffic. Each packet gets
 * four independent draws (loss, corruption, duplication, reordering) so that the same
 * seed yields the same decisions for the same packet sequence. Confined to whoever runs the device's protocol.
 */
final class FaultInjector {
    static final int DROP = 1;
    static final int CORRUPT = 1 << 1;
    static final int DUPLICATE = 1 << 2;
    static final int REORDER = 1 << 3;

    private final FaultPlan plan;
    private final SplittableRandom random;

    FaultInjector(FaultPlan plan) {
        this.plan = plan;
        this.random = new SplittableRandom(plan.seed());
    }

    boolean active() {
        return !plan.isNone();
    }

    /** Whether the plan duplicates or reorders packets (faults that move a packet, not just spoil it). */
    boolean movesPackets() {
        return plan.duplicate() > 0 || plan.reorder() > 0;
    }

    /** Whether the plan at most loses packets (no byte of a packet it lets through changes). */
    boolean onlyDrops() {
        return plan.corrupt() == 0 && !movesPackets();
    }

    /** A bit set of the faults to apply to the next packet; DROP excludes the others. */
    int decide() {
        double l = random.nextDouble();
        double c = random.nextDouble();
        double d = random.nextDouble();
        double r = random.nextDouble();
        if (l < plan.loss()) {
            return DROP;
        }
        int f = 0;
        if (c < plan.corrupt()) {
            f |= CORRUPT;
        }
        if (d < plan.duplicate()) {
            f |= DUPLICATE;
        }
        if (r < plan.reorder()) {
            f |= REORDER;
        }
        return f;
    }

    /** Which byte of a {@code length}-byte datagram to flip. */
    int corruptIndex(int length) {
        return random.nextInt(length);
    }

    FaultPlan plan() {
        return plan;
    }
}
