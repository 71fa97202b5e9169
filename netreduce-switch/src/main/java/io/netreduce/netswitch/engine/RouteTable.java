package io.netreduce.netswitch.engine;

import java.util.Collection;

/**
 * Immutable open-addressing map from {@code (source address, request?, DestQP)} to {@link Route}, the
 * connection half of the CLT. The control plane builds a new table for every change and
 * publishes it; the datapath looks up without locks or allocation.
 */
final class RouteTable {
    static final RouteTable EMPTY = new RouteTable(java.util.List.of());

    private final long[] keys;
    private final Route[] routes;
    private final int mask;
    private final int size;

    RouteTable(Collection<Route> all) {
        int capacity = Integer.highestOneBit(Math.max(4, all.size() * 2) - 1) << 1;
        keys = new long[capacity];
        routes = new Route[capacity];
        mask = capacity - 1;
        for (Route r : all) {
            long k = r.key();
            int i = index(k);
            while (routes[i] != null) {
                if (keys[i] == k) {
                    throw new IllegalStateException("duplicate route key " + Long.toHexString(k));
                }
                i = (i + 1) & mask;
            }
            keys[i] = k;
            routes[i] = r;
        }
        size = all.size();
    }

    private int index(long k) {
        long h = k * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 40) & mask;
    }

    Route get(int sourceIp, boolean request, int destQp) {
        long k = Route.key(sourceIp, request, destQp);
        int i = index(k);
        Route r;
        while ((r = routes[i]) != null) {
            if (keys[i] == k) {
                return r;
            }
            i = (i + 1) & mask;
        }
        return null;
    }

    int size() {
        return size;
    }
}
