package io.netreduce.netswitch;

import io.netreduce.wire.roce.RoceAddressing;

import io.netreduce.netswitch.engine.ConnectionSpec;
import io.netreduce.netswitch.engine.RingConfig;
import io.netreduce.wire.roce.Bth;
import io.netreduce.wire.roce.Icrc;
import io.netreduce.wire.ina.InaHeader;
import io.netreduce.wire.roce.Opcode;
import io.netreduce.wire.roce.Psn;
import io.netreduce.wire.roce.RoceFrame;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Test hosts of one ring, crafting the exact RoCEv2 SEND datagrams a NetReduce host's NIC
 * would send (INA header in the message data, per-connection PSNs, canonical-header ICRC)
 * and checking the switch's output against a reference summed in rank order.
 */
public final class RingFixture {
    public final RingConfig config;
    public final int[] ip;
    /** UDP port each host listens on (4791 unless a test binds ephemeral ports). */
    public final int[] port;
    public final int[] qpnNext;
    public final int[] qpnPrev;
    public final int[] firstPsn;
    private final int[] nextPsn;
    /** Icrc instances are single-threaded; hosts and fuzzers sign from their own threads. */
    private final ThreadLocal<Icrc> icrc = ThreadLocal.withInitial(Icrc::new);

    public RingFixture(RingConfig config, int firstHostOctet, long seed) {
        this(config, ((127L << 24) | (firstHostOctet & 0xFF)), seed);
    }

    /** Hosts at consecutive IPv4 addresses from {@code firstHostIp}. */
    public static RingFixture onHosts(RingConfig config, int firstHostIp, long seed) {
        return new RingFixture(config, firstHostIp & 0xFFFFFFFFL, seed);
    }

    private RingFixture(RingConfig config, long firstHostIp, long seed) {
        this.config = config;
        int p = config.ranks();
        port = new int[p];
        java.util.Arrays.fill(port, 4791);
        Random rnd = new Random(seed);
        ip = new int[p];
        qpnNext = new int[p];
        qpnPrev = new int[p];
        firstPsn = new int[p];
        nextPsn = new int[p];
        for (int r = 0; r < p; r++) {
            ip[r] = (int) firstHostIp + r;
            qpnNext[r] = 0x100 + rnd.nextInt(0xFFFF) ;
            qpnPrev[r] = 0x20000 + rnd.nextInt(0xFFFF);
            // Start near the 24-bit wrap now and then so PSN arithmetic is exercised.
            firstPsn[r] = rnd.nextBoolean() ? rnd.nextInt(Psn.MASK + 1) : Psn.MASK - rnd.nextInt(50);
            nextPsn[r] = firstPsn[r];
        }
    }

    /** PSN rank r's next message will start at. */
    public int nextPsn(int r) {
        return nextPsn[r];
    }

    public int ranks() {
        return config.ranks();
    }

    public int successor(int r) {
        return (r + 1) % ranks();
    }

    public ConnectionSpec connection(int r) {
        int s = successor(r);
        return new ConnectionSpec(r, ip[r], port[r], qpnNext[r], ip[s], port[s], qpnPrev[s]);
    }

    /** Random message payload of {@code bytes} bytes: floats in [-1000, 1000) or arbitrary ints. */
    public byte[] randomPayload(Random rnd, int bytes) {
        ByteBuffer b = ByteBuffer.allocate(bytes).order(config.byteOrder());
        for (int i = 0; i < bytes / 4; i++) {
            if (config.dtype() == InaHeader.DTYPE_FP32) {
                b.putFloat((rnd.nextFloat() - 0.5f) * 2000f);
            } else {
                b.putInt(rnd.nextInt());
            }
        }
        return b.array();
    }

    public int packetsOf(int payloadBytes) {
        return (InaHeader.LENGTH + payloadBytes + config.mtu() - 1) / config.mtu();
    }

    /** The datagrams of rank r's message; consumes PSNs from the rank's connection. */
    public List<ByteBuffer> message(int r, int msgId, byte[] payload) {
        return message(r, msgId, payload, nextPsn[r], true);
    }

    /** As {@link #message(int, int, byte[])} but from an explicit first PSN (for retransmissions). */
    public List<ByteBuffer> message(int r, int msgId, byte[] payload, int psn0, boolean advance) {
        return message(r, msgId, payload, psn0, advance, callOf(msgId));
    }

    /** The call digest every rank's message {@code msgId} carries unless a test says otherwise. */
    public static int callOf(int msgId) {
        return 0x5EED0000 + msgId;
    }

    /** As above, carrying call digest {@code call} (a rank that made another call than the others). */
    public List<ByteBuffer> message(int r, int msgId, byte[] payload, int psn0, boolean advance, int call) {
        ByteBuffer data = ByteBuffer.allocate(InaHeader.LENGTH + payload.length);
        new InaHeader().wrap(data, 0).set(config.dtype(), r, config.ringId(), msgId, payload.length, call);
        data.put(InaHeader.LENGTH, payload);
        int mtu = config.mtu();
        int count = packetsOf(payload.length);
        List<ByteBuffer> out = new ArrayList<>();
        for (int j = 0; j < count; j++) {
            int from = j * mtu;
            int len = Math.min(mtu, data.capacity() - from);
            int op = Opcode.send(j, count, false);
            int total = RoceFrame.datagramLength(op, len);
            ByteBuffer d = ByteBuffer.allocate(total);
            new Bth().wrap(d, 0).set(op, false, RoceFrame.padFor(len), qpnPrev[successor(r)], j == count - 1,
                    Psn.add(psn0, j));
            d.put(Bth.LENGTH, data, from, len);
            sign(r, d);
            out.add(d);
        }
        if (advance) {
            nextPsn[r] = Psn.add(psn0, count);
        }
        return out;
    }

    /** Recomputes the ICRC of a datagram on rank r's connection after the test edited it. */
    public void sign(int r, ByteBuffer d) {
        int s = successor(r);
        icrc.get().write(ip[r], ip[s], RoceAddressing.sourcePort(qpnNext[r]), port[s], d, 0, d.capacity());
    }

    /** True if a datagram delivered to rank {@code receiver} carries a valid ICRC for its connection. */
    public boolean verifyAtReceiver(int receiver, ByteBuffer d, int length) {
        int sender = (receiver + ranks() - 1) % ranks();
        return icrc.get().verify(ip[sender], ip[receiver], RoceAddressing.sourcePort(qpnNext[sender]), port[receiver], d, 0, length);
    }

    /** Rank index of a host address, or -1. */
    public int rankOf(int hostIp) {
        for (int r = 0; r < ranks(); r++) {
            if (ip[r] == hostIp) {
                return r;
            }
        }
        return -1;
    }

    /** Reference: element-wise sum in rank order, in the ring's dtype and byte order. */
    public byte[] referenceSum(byte[][] payloads) {
        int n = payloads[0].length;
        ByteOrder order = config.byteOrder();
        ByteBuffer out = ByteBuffer.allocate(n).order(order);
        ByteBuffer[] in = new ByteBuffer[payloads.length];
        for (int r = 0; r < payloads.length; r++) {
            in[r] = ByteBuffer.wrap(payloads[r]).order(order);
        }
        for (int i = 0; i < n; i += 4) {
            if (config.dtype() == InaHeader.DTYPE_FP32) {
                float acc = in[0].getFloat(i);
                for (int r = 1; r < payloads.length; r++) {
                    acc += in[r].getFloat(i);
                }
                out.putFloat(i, acc);
            } else {
                int acc = in[0].getInt(i);
                for (int r = 1; r < payloads.length; r++) {
                    acc += in[r].getInt(i);
                }
                out.putInt(i, acc);
            }
        }
        return out.array();
    }
}
