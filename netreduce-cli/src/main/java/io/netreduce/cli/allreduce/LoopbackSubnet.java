package io.netreduce.cli.allreduce;

import java.util.List;
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

    /** Another /24 as {@link #pick()} gives, none of {@code taken}. */
    public static LoopbackSubnet pickOther(List<LoopbackSubnet> taken) {
        while (true) {
            LoopbackSubnet s = pick();
            if (taken.stream().noneMatch(t -> t.a == s.a && t.b == s.b)) {
                return s;
            }
        }
    }

    /** The subnet of {@link #prefix()}'s form, "127.A.B". */
    public static LoopbackSubnet parse(String prefix) {
        String[] parts = prefix.trim().split("\\.");
        if (parts.length != 3 || !parts[0].equals("127")) {
            throw new IllegalArgumentException("not a loopback /24 as 127.A.B: " + prefix);
        }
        int a = Integer.parseInt(parts[1]);
        int b = Integer.parseInt(parts[2]);
        if (a < 0 || a > 255 || b < 0 || b > 255) {
            throw new IllegalArgumentException("not a loopback /24 as 127.A.B: " + prefix);
        }
        return new LoopbackSubnet(a, b);
    }

    /** "127.A.B", as {@link #parse} reads it. */
    public String prefix() {
        return "127." + a + "." + b;
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
