package io.netreduce.collectives.rendezvous;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small key-value store for rendezvous, hosted by rank 0 (like torch's TCPStore). One
 * text line per request over TCP:
 * <ul>
 * <li>{@code HELLO rank}, {@code SET key value}, {@code WAIT key} (answered when the key
 * exists), {@code BYE}: answered with {@code R value};</li>
 * <li>{@code CHECK key rank value}: answered with {@code C key OK} once every rank has
 * checked the same key with the same value, or {@code C key MISMATCH ...} listing each
 * rank's value, used to agree on every collective without a wait on the data path;</li>
 * <li>{@code FAIL text}: the first failure is pushed to every rank as {@code F text};
 * {@code MISMATCH seq text} is a failure too, pushed as {@code M seq text}: ranks called
 * different collectives, the first different one numbered {@code seq} as far as the
 * reporting rank knows, so each rank should check its call under its sequence number to
 * have them all listed.</li>
 * </ul>
 * A rank whose connection ends without {@code BYE} is reported as failed to everyone: that
 * is how the other ranks learn, by name, that a process died.
 */
public final class StoreServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StoreServer.class);

    /** See {@link #dropStaleOperationChecks}. */
    private static final long STALE_OPERATIONS = 16;
    private final int worldSize;
    private final ServerSocket socket;
    private final Thread acceptor;
    private final List<Connection> connections = new CopyOnWriteArrayList<>();
    private final Map<String, String> values = new HashMap<>();
    private final Map<String, List<Connection>> waiters = new HashMap<>();
    private final Map<String, Check> checks = new HashMap<>();
    private final Connection[] byRank;
    private String failure;
    /** Why checks can no longer complete (a rank left without goodbye), or null. */
    private String departed;
    private int leftCount;
    private volatile boolean closed;

    private static final class Check {
        final String[] values;
        final Connection[] from;
        int count;

        Check(int n) {
            values = new String[n];
            from = new Connection[n];
        }
    }

    private final class Connection implements Runnable {
        final Socket s;
        final OutputStream out;
        int rank = -1;
        boolean left;

        Connection(Socket s) throws IOException {
            this.s = s;
            this.out = s.getOutputStream();
        }

        synchronized void send(String line) {
            try {
                out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                out.flush();
            } catch (IOException e) {
                LOG.debug("store: cannot write to rank {}: {}", rank, e.toString());
            }
        }

        /**
         * A line no netreduce rank sends (another program, or another version of the
         * protocol): from a rank of the group, the group fails saying so, since what that rank
         * meant is lost; from a connection that never said which rank it is, only that
         * connection is dropped.
         */
        private void unreadable(String line, RuntimeException e) {
            String shown = line.length() > 80 ? line.substring(0, 80) + "..." : line;
            if (rank < 0) {
                LOG.warn("store: dropped a connection from {} that sent '{}', which the store cannot read ({})",
                        s.getRemoteSocketAddress(), shown, e.toString());
                return;
            }
            fail("rank " + rank + " sent the rendezvous store '" + shown + "', which it cannot read (" + e
                    + "): a different netreduce version or another program on its connection", "F ");
        }

        @Override
        public void run() {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    try {
                        handle(this, line);
                    } catch (RuntimeException e) {
                        unreadable(line, e);
                        break;
                    }
                }
            } catch (IOException e) {
                LOG.debug("store: connection of rank {} ended: {}", rank, e.toString());
            } finally {
                connections.remove(this);
                synchronized (StoreServer.this) {
                    StoreServer.this.notifyAll();
                }
                if (!left && rank >= 0 && !closed) {
                    String gone = "rank " + rank + " left the group without closing its communicator "
                            + "(process died or lost its connection to the rendezvous host)";
                    fail(gone, "F ");
                    abandonChecks(gone);
                }
                try {
                    s.close();
                } catch (IOException ignored) {
                    // already gone
                }
            }
        }
    }

    public StoreServer(InetSocketAddress bind, int worldSize) throws IOException {
        this.worldSize = worldSize;
        this.byRank = new Connection[worldSize];
        this.socket = new ServerSocket();
        socket.setReuseAddress(true);
        socket.bind(bind, 128);
        acceptor = new Thread(this::acceptLoop, "netreduce-store-" + socket.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) socket.getLocalSocketAddress();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket s = socket.accept();
                s.setTcpNoDelay(true);
                Connection c = new Connection(s);
                connections.add(c);
                Thread t = new Thread(c, "netreduce-store-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                if (!closed) {
                    LOG.warn("store: accept failed: {}", e.toString());
                }
            }
        }
    }

    private void handle(Connection c, String line) {
        String[] p = line.split(" ", 4);
        switch (p[0]) {
            case "HELLO" -> {
                String f;
                synchronized (this) {
                    c.rank = Integer.parseInt(p[1]);
                    if (c.rank >= 0 && c.rank < worldSize) {
                        byRank[c.rank] = c;
                    }
                    f = failure;
                    notifyAll();
                }
                c.send("R OK");
                if (f != null) {
                    c.send("F " + f);
                }
            }
            case "SET" -> {
                String value = line.substring(5 + p[1].length());
                List<Connection> wake;
                synchronized (this) {
                    values.put(p[1], value);
                    wake = waiters.remove(p[1]);
                }
                c.send("R OK");
                if (wake != null) {
                    wake.forEach(w -> w.send("R " + value));
                }
            }
            case "WAIT" -> {
                String v;
                synchronized (this) {
                    v = values.get(p[1]);
                    if (v == null) {
                        waiters.computeIfAbsent(p[1], k -> new ArrayList<>()).add(c);
                    }
                }
                if (v != null) {
                    c.send("R " + v);
                }
            }
            case "CHECK" -> check(c, p[1], Integer.parseInt(p[2]), p.length > 3 ? p[3] : "");
            case "WHO" -> c.send("R " + missing(p[1]));
            case "FAIL" -> fail(line.substring(5), "F ");
            case "MISMATCH" -> {
                // "seq text" (StoreClient#reportMismatch): the text is the failure (what a rank
                // that joins later is told); the connected ranks also get the operation, so that
                // one still in an earlier operation can finish it.
                int space = line.indexOf(' ', 9);
                fail(line.substring(space + 1), "M " + Long.parseLong(line.substring(9, space)) + " ");
            }
            case "BYE" -> {
                synchronized (this) {
                    c.left = true;
                    leftCount++;
                    notifyAll();
                }
                c.send("R OK");
            }
            default -> c.send("R ERROR unknown request: " + p[0]);
        }
    }

    private void check(Connection c, String key, int rank, String value) {
        if (rank < 0 || rank >= worldSize) {
            c.send("F rendezvous store: CHECK " + key + " from rank " + rank + " outside world of size " + worldSize);
            return;
        }
        Check done;
        synchronized (this) {
            if (departed != null) {
                c.send("C " + key + " FAILED " + departed); // that rank will never check it
                return;
            }
            dropStaleOperationChecks(key);
            Check k = checks.computeIfAbsent(key, x -> new Check(worldSize));
            if (k.values[rank] == null) {
                k.count++;
            }
            k.values[rank] = value;
            k.from[rank] = c;
            if (k.count < worldSize) {
                done = null;
            } else {
                checks.remove(key);
                done = k;
            }
        }
        if (done == null) {
            return;
        }
        reply(key, done);
    }

    /**
     * A rank is gone: no check can complete any more. Every rank waiting for one is told so
     * at once, and so is every later one.
     */
    private void abandonChecks(String why) {
        List<Connection> waiting = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        synchronized (this) {
            departed = why;
            for (Map.Entry<String, Check> e : checks.entrySet()) {
                for (Connection w : e.getValue().from) {
                    if (w != null) {
                        waiting.add(w);
                        keys.add(e.getKey());
                    }
                }
            }
            checks.clear();
        }
        for (int i = 0; i < waiting.size(); i++) {
            waiting.get(i).send("C " + keys.get(i) + " FAILED " + why);
        }
    }

    /**
     * A rank announces some operations only when they wait long (the in-band agreement), so
     * their checks may never complete: once a rank announces operation N, the checks of
     * operations more than {@link #STALE_OPERATIONS} before it are dropped. No mode lets a
     * rank run that far ahead of a check it still needs.
     */
    private void dropStaleOperationChecks(String key) {
        long seq = operation(key);
        if (seq > STALE_OPERATIONS && checks.size() > 1) {
            checks.keySet().removeIf(k -> {
                long s = operation(k);
                return s >= 0 && s < seq - STALE_OPERATIONS;
            });
        }
    }

    private static long operation(String key) {
        if (!key.startsWith("op/")) {
            return -1;
        }
        try {
            return Long.parseLong(key.substring(3));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private void reply(String key, Check done) {
        boolean same = true;
        for (String v : done.values) {
            same &= v.equals(done.values[0]);
        }
        StringBuilder reply = new StringBuilder("C ").append(key).append(same ? " OK" : " MISMATCH");
        if (!same) {
            for (int r = 0; r < worldSize; r++) {
                reply.append(r == 0 ? " " : ", ").append("rank ").append(r).append(": ").append(done.values[r]);
            }
        }
        for (Connection to : done.from) {
            to.send(reply.toString());
        }
    }

    /** Ranks that have not yet checked {@code key}, e.g. "[2, 3]"; "[]" if the check completed or never began. */
    private synchronized String missing(String key) {
        Check k = checks.get(key);
        List<Integer> ranks = new ArrayList<>();
        for (int r = 0; k != null && r < worldSize; r++) {
            if (k.values[r] == null) {
                ranks.add(r);
            }
        }
        return ranks.toString();
    }

    /**
     * Waits until {@code ranks} ranks have left with BYE (or a failure was reported), so
     * the host of the store does not pull it from under ranks still finishing an operation.
     */
    public synchronized boolean awaitLeft(int ranks, long timeoutMillis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (leftCount < ranks && failure == null) {
            long wait = deadline - System.currentTimeMillis();
            if (wait <= 0) {
                return false;
            }
            wait(wait);
        }
        return true;
    }

    /**
     * After a failure, before the host of the store goes away: waits (bounded) until every
     * rank has connected, and so heard of the failure (a rank that connects later is told it
     * at once), and every connection has closed. Without it a rank that joins a moment late
     * would find no store and report that instead of the real cause.
     */
    public synchronized boolean awaitEveryoneInformed(long timeoutMillis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (!everyoneConnectedOnce() || !connections.isEmpty()) {
            long wait = deadline - System.currentTimeMillis();
            if (wait <= 0) {
                return false;
            }
            wait(wait);
        }
        return true;
    }

    private boolean everyoneConnectedOnce() {
        for (Connection c : byRank) {
            if (c == null) {
                return false;
            }
        }
        return true;
    }

    /** Records the group's first failure and pushes it to every rank as {@code prefix + text}. */
    private void fail(String text, String prefix) {
        String flat = text.replace('\n', ' ');
        synchronized (this) {
            if (failure != null) {
                return;
            }
            failure = flat;
            notifyAll();
        }
        LOG.warn("store: failure reported to every rank: {}", flat);
        for (Connection c : connections) {
            c.send(prefix + flat);
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (Connection c : connections) {
            try {
                c.s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        try {
            acceptor.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
