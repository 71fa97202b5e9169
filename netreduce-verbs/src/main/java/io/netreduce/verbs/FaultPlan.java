package io.netreduce.verbs;

/**
 * Seeded fault injection for one direction of a device's traffic: each packet is
 * independently lost, corrupted (one byte flipped, so its ICRC fails), duplicated, or
 * held back and sent after the next one (reordered), with the given probabilities.
 * The same seed gives the same decisions for the same packet sequence.
 */
public record FaultPlan(long seed, double loss, double duplicate, double reorder, double corrupt) {

    /** No faults. */
    public static final FaultPlan NONE = new FaultPlan(0, 0, 0, 0, 0);

    public FaultPlan {
        check(loss, "loss");
        check(duplicate, "duplicate");
        check(reorder, "reorder");
        check(corrupt, "corrupt");
    }

    public static FaultPlan loss(long seed, double probability) {
        return new FaultPlan(seed, probability, 0, 0, 0);
    }

    public boolean isNone() {
        return loss == 0 && duplicate == 0 && reorder == 0 && corrupt == 0;
    }

    private static void check(double p, String what) {
        if (!(p >= 0 && p < 1)) {
            throw new IllegalArgumentException(what + " probability must be in [0, 1): " + p);
        }
    }
}
