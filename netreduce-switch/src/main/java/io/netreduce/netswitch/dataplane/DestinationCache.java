package io.netreduce.netswitch.dataplane;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * Socket addresses by (IPv4, port), built once each so that sending allocates no address per
 * packet. Only the engine's routes produce destinations, so the cache holds registered
 * endpoints and does not grow with input. Data-plane thread only.
 */
final class DestinationCache {
    private long[] keys = new long[64];
    private InetSocketAddress[] values = new InetSocketAddress[64];
    private int size;

    InetSocketAddress get(int ip, int port) {
        long key = ((ip & 0xFFFFFFFFL) << 16) | (port & 0xFFFF);
        int mask = keys.length - 1;
        int i = (int) (key * 0x9E3779B97F4A7C15L >>> 40) & mask;
        while (values[i] != null) {
            if (keys[i] == key) {
                return values[i];
            }
            i = (i + 1) & mask;
        }
        if (size * 2 >= keys.length) {
            grow();
            return get(ip, port);
        }
        InetSocketAddress a = new InetSocketAddress(toInet(ip), port & 0xFFFF);
        keys[i] = key;
        values[i] = a;
        size++;
        return a;
    }

    private void grow() {
        long[] k = keys;
        InetSocketAddress[] v = values;
        keys = new long[k.length * 2];
        values = new InetSocketAddress[k.length * 2];
        size = 0;
        for (int i = 0; i < k.length; i++) {
            if (v[i] != null) {
                get((int) (k[i] >>> 16), (int) (k[i] & 0xFFFF));
            }
        }
    }

    private static InetAddress toInet(int ip) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) (ip >>> 24), (byte) (ip >>> 16), (byte) (ip >>> 8), (byte) ip});
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
