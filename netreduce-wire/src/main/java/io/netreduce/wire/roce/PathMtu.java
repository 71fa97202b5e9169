package io.netreduce.wire.roce;

/** The path MTUs RoCE defines: payload bytes per packet (IBTA vol. 1, "PMTU"). */
public final class PathMtu {
    /** Every valid path MTU, smallest first. */
    private static final int[] VALUES = {256, 512, 1024, 2048, 4096};

    private PathMtu() {
    }

    /** Throws unless {@code mtu} is 256, 512, 1024, 2048 or 4096; returns it. */
    public static int check(int mtu) {
        for (int m : VALUES) {
            if (m == mtu) {
                return mtu;
            }
        }
        throw new IllegalArgumentException("path MTU must be 256, 512, 1024, 2048 or 4096, not " + mtu);
    }

    public static boolean isValid(int mtu) {
        for (int m : VALUES) {
            if (m == mtu) {
                return true;
            }
        }
        return false;
    }
}
