package io.netreduce.wire.roce;

/**
 * 24-bit packet sequence number arithmetic. Comparisons follow rxe's {@code psn_compare}:
 * shifting the 24-bit difference into the top of an int makes wrap-around fall out of
 * two's-complement, valid while the distance is under 2^23.
 */
public final class Psn {
    public static final int MASK = 0xFFFFFF;
    /** Largest distance at which {@link #compare} is meaningful. */
    public static final int HALF_SPACE = 1 << 23;

    private Psn() {
    }

    public static int next(int psn) {
        return (psn + 1) & MASK;
    }

    public static int add(int psn, int delta) {
        return (psn + delta) & MASK;
    }

    /** Positive if {@code a} is after {@code b}, zero if equal, negative if before. */
    public static int compare(int a, int b) {
        return (a - b) << 8;
    }

    /** Signed distance {@code a - b} in packets, in (-2^23, 2^23]. */
    public static int diff(int a, int b) {
        return ((a - b) << 8) >> 8;
    }

    public static boolean isBefore(int a, int b) {
        return compare(a, b) < 0;
    }

    public static boolean isAfter(int a, int b) {
        return compare(a, b) > 0;
    }

    /** True when {@code psn} lies in [first, first + count). */
    public static boolean inRange(int psn, int first, int count) {
        int d = diff(psn, first);
        return d >= 0 && d < count;
    }

    public static boolean isValid(int psn) {
        return (psn & ~MASK) == 0;
    }
}
