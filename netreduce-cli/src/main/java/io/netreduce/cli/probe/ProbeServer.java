package io.netreduce.cli.probe;

import io.netreduce.cli.Addresses;
import io.netreduce.cli.CliException;
import io.netreduce.verbs.QpEndpoint;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.WorkCompletion;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The passive side of a probe: listens on the side channel, serves one client (as perftest
 * does), then exits. For bw it is the target of the client's RDMA WRITEs and checks that
 * the data landed intact; for rtt it answers every SEND with a SEND of the same size.
 */
final class ProbeServer {
    private static final Logger LOG = LoggerFactory.getLogger(ProbeServer.class);

    private final ProbeKind kind;
    private final InetSocketAddress listenAt;
    private final InetSocketAddress deviceAt;
    private final Duration timeout;
    private final PrintWriter out;

    ProbeServer(ProbeKind kind, InetSocketAddress listenAt, InetSocketAddress deviceAt, Duration timeout,
                PrintWriter out) {
        this.kind = kind;
        this.listenAt = listenAt;
        this.deviceAt = deviceAt;
        this.timeout = timeout;
        this.out = out;
    }

    void serveOne() throws IOException, InterruptedException {
        try (ServerSocket listener = new ServerSocket()) {
            try {
                listener.bind(listenAt);
            } catch (BindException e) {
                throw new CliException("cannot listen on " + Addresses.format(listenAt) + ": " + e.getMessage()
                        + " (another probe server running? choose another with --listen)", e);
            }
            listener.setSoTimeout((int) timeout.toMillis());
            out.println(ProbeTestCommand.WAITING + listener.getInetAddress().getHostAddress() + ":"
                    + listener.getLocalPort());
            out.flush();
            Socket socket;
            try {
                socket = listener.accept();
            } catch (SocketTimeoutException e) {
                throw new CliException("no client connected within " + timeout.toSeconds() + " s", e);
            }
            try (SideChannel channel = new SideChannel(socket, timeout)) {
                try {
                    serve(channel);
                } catch (CliException e) {
                    sendError(channel, e.getMessage());
                    throw e;
                }
            }
        }
    }

    private void serve(SideChannel channel) throws IOException, InterruptedException {
        SideChannel.Message hello = channel.expect("HELLO");
        String test = hello.get("test");
        if (!test.equals(kind.wireName())) {
            throw new CliException("this server runs '" + kind.wireName() + "' but the client asked for '" + test + "'");
        }
        String transport = hello.get("transport");
        int mtu = hello.getInt("mtu");
        int maxSize = hello.getInt("max_size");
        long seed = hello.getLong("seed");
        QpEndpoint clientEndpoint = QpEndpoint.parse(hello.get("endpoint"));
        try (VerbsSide side = VerbsSide.open(transport, deviceAt, mtu, maxSize, kind == ProbeKind.RTT)) {
            channel.send("WELCOME", "endpoint", side.qp.localEndpoint(), "addr", side.mr.address(),
                    "rkey", side.mr.rkey());
            side.connect(clientEndpoint, timeout);
            LOG.info("probe {} over {}: connected to {}", test, transport, clientEndpoint);
            RecvRequest recv = new RecvRequest(1);
            if (kind == ProbeKind.RTT) {
                postRecv(side, recv);
            }
            byte[] expected = kind == ProbeKind.BW ? ProbeClient.pattern(seed, maxSize) : null;
            int sizesServed = 0;
            while (true) {
                SideChannel.Message m = channel.expectAny("RUN", "BYE");
                if (m.verb().equals("BYE")) {
                    break;
                }
                int size = m.getInt("size");
                int total = m.getInt("iters") + m.getInt("warmup");
                if (size > maxSize) {
                    throw new CliException("size " + size + " exceeds the announced maximum " + maxSize);
                }
                if (kind == ProbeKind.BW) {
                    side.mr.buffer().put(0, new byte[size]);
                    channel.send("READY");
                    channel.expect("CHECK");
                    checkLanded(side.mr.buffer(), expected, size);
                    channel.send("CHECKED", "ok", "true");
                } else {
                    channel.send("READY");
                    echo(side, recv, size, total);
                    // Only now may the client tear down: our last pong has been acknowledged.
                    channel.send("ECHOED");
                }
                sizesServed++;
            }
            out.println("probe " + test + " server: served " + sizesServed + " size(s) over " + transport
                    + "; counters " + side.qp.counters());
            out.flush();
        }
    }

    /** Answers {@code total} pings with pongs of the same size. */
    private void echo(VerbsSide side, RecvRequest recv, int size, int total) throws InterruptedException {
        WorkCompletion[] wcs = Completions.array(16);
        SendRequest send = new SendRequest(1);
        long deadline = System.nanoTime() + timeout.toNanos();
        int unacked = 0;
        for (int i = 0; i < total; i++) {
            Completions.await(side.recvCq, wcs, deadline, "ping " + i);
            if (wcs[0].byteLength() != size) {
                throw new CliException("ping " + i + " carried " + wcs[0].byteLength() + " bytes, expected " + size);
            }
            postRecv(side, recv);
            send.reset().wrId(i).sgl().add(side.mr, 0, size);
            side.qp.postSend(send);
            unacked++;
            unacked -= Completions.drain(side.sendCq, wcs, "pong");
            while (unacked > VerbsSide.QUEUE_DEPTH / 2) {
                unacked -= Completions.await(side.sendCq, wcs, deadline, "pong completion");
            }
        }
        while (unacked > 0) {
            unacked -= Completions.await(side.sendCq, wcs, deadline, "pong completion");
        }
    }

    private static void postRecv(VerbsSide side, RecvRequest recv) {
        recv.reset().sgl().add(side.mr, 0, side.mr.length());
        side.qp.postRecv(recv);
    }

    private static void checkLanded(ByteBuffer buffer, byte[] expected, int size) {
        for (int i = 0; i < size; i++) {
            if (buffer.get(i) != expected[i]) {
                throw new CliException("data check failed: byte " + i + " of " + size + " is " + buffer.get(i)
                        + ", the client wrote " + expected[i]);
            }
        }
    }

    private static void sendError(SideChannel channel, String message) {
        try {
            channel.send("ERROR " + message.replace('\n', ' '));
        } catch (IOException ignored) {
            // The client is gone; our own error message is what matters.
        }
    }
}
