package io.netreduce.cli.allreduce;

import java.util.concurrent.ThreadLocalRandom;

/**
 * A /24 of 127.0.0.0/8 picked at random for one demo or bench run. Every worker's device
 * binds the RoCEv2 port 4791 on its own address in it (rank r on .r+2) and the switch
 * uses .100, so two runs on one machine, or a run beside a test suite that uses
 * 127.0.0.x, never compete for the same address and port.
 */
public final class LoopbackSubnet {
    private final int a;
    private final int b;

    private LoopbackSubnet(int a, int b) {
        this.a = a;
        this.b = b;
    }

    /** 127.A.B.0/24 with A in [64, 192): away from 127.0.0.x, where defaults and tests live. */
    public static LoopbackSubnet pick() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        return new LoopbackSubnet(64 + random.nextInt(128), random.nextInt(256));
    }

    public String host(int last) {
        if (last < 1 || last > 254) {
            throw new IllegalArgumentException("host number must be in [1, 254]: " + last);
        }
        return "127." + a + "." + b + "." + last;
    }

    /** Rank r's device address. */
    public String rank(int r) {
        return host(r + 2);
    }

    public String switchHost() {
        return host(100);
    }
}
