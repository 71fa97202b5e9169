package io.netreduce.netswitch;

import io.netreduce.wire.roce.Bth;
import io.netreduce.wire.roce.FrameError;
import io.netreduce.wire.ina.InaHeader;
import io.netreduce.wire.roce.Psn;
import io.netreduce.wire.roce.RoceFrame;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * What each rank received from the switch, as its NIC would see it: every datagram must
 * parse, carry the receiving QP's DestQP and a valid ICRC for its connection; payloads are
 * kept by PSN so messages can be reassembled and compared.
 */
public final class Delivered {
    private final RingFixture ring;
    private final Map<Integer, Map<Integer, byte[]>> byReceiver = new HashMap<>();
    private final RoceFrame frame = new RoceFrame();

    public Delivered(RingFixture ring) {
        this.ring = ring;
    }

    /** Records one datagram addressed to {@code hostIp}; fails the test if it is not a valid packet for it. */
    public synchronized void accept(int hostIp, ByteBuffer d, int length) {
        int receiver = ring.rankOf(hostIp);
        if (receiver < 0) {
            throw new AssertionError("datagram to an address outside the ring: " + Integer.toHexString(hostIp));
        }
        if (frame.wrap(d, 0, length) != FrameError.NONE) {
            throw new AssertionError("malformed datagram to rank " + receiver + ": " + frame.error());
        }
        if (!ring.verifyAtReceiver(receiver, d, length)) {
            throw new AssertionError("bad ICRC on datagram to rank " + receiver + " " + frame.bth());
        }
        if (frame.bth().destQp() != ring.qpnPrev[receiver]) {
            throw new AssertionError("datagram to rank " + receiver + " has DestQP " + frame.bth().destQp());
        }
        byte[] payload = new byte[frame.payloadLength()];
        d.get(frame.payloadOffset(), payload);
        byReceiver.computeIfAbsent(receiver, k -> new HashMap<>()).put(frame.bth().psn(), payload);
    }

    public synchronized boolean has(int receiver, int psn) {
        return byReceiver.getOrDefault(receiver, Map.of()).containsKey(psn);
    }

    public synchronized byte[] payload(int receiver, int psn) {
        return byReceiver.getOrDefault(receiver, Map.of()).get(psn);
    }

    public synchronized void forget(int receiver, int psn) {
        byReceiver.getOrDefault(receiver, new HashMap<>()).remove(psn);
    }

    /** True if every packet of the message that starts at {@code psn0} reached {@code receiver}. */
    public synchronized boolean complete(int receiver, int psn0, int packets) {
        for (int j = 0; j < packets; j++) {
            if (!has(receiver, Psn.add(psn0, j))) {
                return false;
            }
        }
        return true;
    }

    /** The message data (INA header + lanes) rank {@code receiver} got for a message starting at psn0. */
    public synchronized byte[] message(int receiver, int psn0, int packets) {
        ByteBuffer all = ByteBuffer.allocate(packets * ring.config.mtu());
        for (int j = 0; j < packets; j++) {
            byte[] p = payload(receiver, Psn.add(psn0, j));
            if (p == null) {
                throw new AssertionError("rank " + receiver + " lacks packet " + j + " (psn " + Psn.add(psn0, j) + ")");
            }
            all.put(p);
        }
        return Arrays.copyOf(all.array(), all.position());
    }

    /** Lanes of a received message (INA header stripped). */
    public byte[] lanes(int receiver, int psn0, int packets) {
        byte[] m = message(receiver, psn0, packets);
        return Arrays.copyOfRange(m, InaHeader.LENGTH, m.length);
    }

    /** The INA header a received message carries. */
    public InaHeader ina(int receiver, int psn0, int packets) {
        return new InaHeader().wrap(ByteBuffer.wrap(message(receiver, psn0, packets)), 0);
    }

    static int opcode(ByteBuffer d) {
        return new Bth().wrap(d, 0).opcode();
    }
}
