package io.netreduce.netswitch;

import io.netreduce.wire.roce.Psn;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.time.Duration;
import java.util.List;
import java.util.Random;

/**
 * The hosts of one ring over real UDP sockets on loopback, sending crafted RoCEv2 SENDs to a
 * running switch and receiving its results, with seeded loss, duplication and reordering on
 * the way to the switch and loss on the way back. A simplified RC sender: a rank posts
 * message i+N once its result i arrived, and resends a message go-back-N style, from its
 * first packet the successor has not received, when that takes longer than a timeout (the
 * successor's receipt stands in for its ACK). With {@code inPlace}, a rank overwrites its
 * send buffer with the result as soon as it arrives, so later retransmissions carry the sum.
 */
public final class UdpRingHosts implements AutoCloseable {
    public final RingFixture ring;
    public final Delivered delivered;
    private final DatagramChannel[] channels;
    private final Selector selector;
    private final InetSocketAddress switchAddress;
    private final Random rnd;
    private final double loss;
    private final double duplicate;
    private final double reorder;
    private final double returnLoss;
    private final boolean inPlace;
    private final long retransmitNanos;
    private final ByteBuffer rx = ByteBuffer.allocate(8192);
    private final ByteBuffer[] held;

    private int messages;
    private byte[][][] originals;
    private byte[][][] current;
    private boolean[][] replaced;
    private int[][] psn0;
    private long[][] lastSend;
    private int[] posted;
    public final java.util.concurrent.atomic.AtomicLong datagramsSent = new java.util.concurrent.atomic.AtomicLong();

    public UdpRingHosts(RingFixture ring, InetSocketAddress switchAddress, long seed, double loss, double duplicate,
                        double reorder, double returnLoss, boolean inPlace, Duration retransmitTimeout)
            throws IOException {
        this.ring = ring;
        this.delivered = new Delivered(ring);
        this.switchAddress = switchAddress;
        this.rnd = new Random(seed);
        this.loss = loss;
        this.duplicate = duplicate;
        this.reorder = reorder;
        this.returnLoss = returnLoss;
        this.inPlace = inPlace;
        this.retransmitNanos = retransmitTimeout.toNanos();
        int p = ring.ranks();
        channels = new DatagramChannel[p];
        held = new ByteBuffer[p];
        selector = Selector.open();
        try {
            for (int r = 0; r < p; r++) {
                channels[r] = DatagramChannel.open();
                channels[r].setOption(java.net.StandardSocketOptions.SO_RCVBUF, 4 << 20);
                channels[r].bind(new InetSocketAddress(inet(ring.ip[r]), 0));
                channels[r].configureBlocking(false);
                channels[r].register(selector, SelectionKey.OP_READ, r);
                ring.port[r] = ((InetSocketAddress) channels[r].getLocalAddress()).getPort();
            }
        } catch (IOException e) {
            close();
            throw e;
        }
    }

    public static InetAddress inet(int ip) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) (ip >>> 24), (byte) (ip >>> 16), (byte) (ip >>> 8), (byte) ip});
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /** Runs {@code messages} messages per rank to completion; false if the deadline passed first. */
    public boolean run(int messages, int payloadBytes, Duration deadline) throws IOException {
        int p = ring.ranks();
        this.messages = messages;
        originals = new byte[messages][p][];
        current = new byte[messages][p][];
        replaced = new boolean[messages][p];
        psn0 = new int[messages][p];
        lastSend = new long[messages][p];
        posted = new int[p];
        for (int m = 0; m < messages; m++) {
            for (int r = 0; r < p; r++) {
                originals[m][r] = ring.randomPayload(rnd, payloadBytes);
                current[m][r] = originals[m][r].clone();
            }
        }
        int packets = ring.packetsOf(payloadBytes);
        int window = ring.config.window();
        long end = System.nanoTime() + deadline.toNanos();
        while (System.nanoTime() < end) {
            receive();
            boolean done = true;
            long now = System.nanoTime();
            for (int r = 0; r < p; r++) {
                int pred = (r + p - 1) % p;
                int succ = ring.successor(r);
                // Post the next message when the window allows.
                while (posted[r] < messages
                        && (posted[r] < window || resultArrived(r, posted[r] - window, pred, packets))) {
                    int m = posted[r]++;
                    psn0[m][r] = ring.nextPsn(r);
                    lastSend[m][r] = now;
                    send(r, ring.message(r, m, current[m][r]), 0);
                }
                for (int m = 0; m < posted[r]; m++) {
                    if (inPlace && !replaced[m][r] && resultArrived(r, m, pred, packets)) {
                        current[m][r] = delivered.lanes(r, psn0[m][pred], packets);
                        replaced[m][r] = true;
                    }
                    boolean acked = delivered.complete(succ, psn0[m][r], packets);
                    if (!acked && now - lastSend[m][r] > retransmitNanos) {
                        int from = 0;
                        while (from < packets && delivered.has(succ, Psn.add(psn0[m][r], from))) {
                            from++;
                        }
                        lastSend[m][r] = now;
                        send(r, ring.message(r, m, current[m][r], psn0[m][r], false), from);
                    }
                }
                done &= posted[r] == messages && resultArrived(r, messages - 1, pred, packets)
                        && allResults(r, pred, packets);
            }
            flushHeld();
            if (done) {
                return true;
            }
            selector.select(1);
            selector.selectedKeys().clear();
        }
        return false;
    }

    private boolean allResults(int r, int pred, int packets) {
        for (int m = 0; m < messages; m++) {
            if (!resultArrived(r, m, pred, packets)) {
                return false;
            }
        }
        return true;
    }

    private boolean resultArrived(int r, int m, int pred, int packets) {
        return m < posted[pred] && delivered.complete(r, psn0[m][pred], packets);
    }

    /** The lanes rank r received for message m. */
    public byte[] result(int r, int m) {
        int pred = (r + ring.ranks() - 1) % ring.ranks();
        return delivered.lanes(r, psn0[m][pred], ring.packetsOf(originals[m][r].length));
    }

    public byte[] reference(int m) {
        return ring.referenceSum(originals[m]);
    }

    private void receive() throws IOException {
        for (int r = 0; r < channels.length; r++) {
            for (int k = 0; k < 256; k++) {
                rx.clear();
                if (channels[r].receive(rx) == null) {
                    break;
                }
                if (rnd.nextDouble() < returnLoss) {
                    continue;
                }
                delivered.accept(ring.ip[r], rx, rx.position());
            }
        }
    }

    private void send(int r, List<ByteBuffer> packets, int from) throws IOException {
        for (int j = from; j < packets.size(); j++) {
            ByteBuffer d = packets.get(j);
            if (rnd.nextDouble() < loss) {
                continue;
            }
            if (held[r] == null && rnd.nextDouble() < reorder) {
                held[r] = d;
                continue;
            }
            transmit(r, d);
            if (rnd.nextDouble() < duplicate) {
                transmit(r, d);
            }
            if (held[r] != null) {
                transmit(r, held[r]);
                held[r] = null;
            }
        }
    }

    private void flushHeld() throws IOException {
        for (int r = 0; r < held.length; r++) {
            if (held[r] != null) {
                transmit(r, held[r]);
                held[r] = null;
            }
        }
    }

    /** Sends raw bytes from rank r's socket (also used by the fuzzer for garbage). */
    public void transmit(int r, ByteBuffer d) throws IOException {
        channels[r].send(d.duplicate().clear(), switchAddress);
        datagramsSent.incrementAndGet();
    }

    @Override
    public void close() throws IOException {
        for (DatagramChannel c : channels) {
            if (c != null) {
                c.close();
            }
        }
        selector.close();
    }
}
