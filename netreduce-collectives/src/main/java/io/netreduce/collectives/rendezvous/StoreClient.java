package io.netreduce.collectives.rendezvous;

import io.netreduce.collectives.CollectiveException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One rank's connection to the {@link StoreServer}. Requests are synchronous with a
 * deadline; a background reader takes replies, check results and pushed failures, so
 * {@link #failure()} is a field read that costs nothing on the data path.
 */
public final class StoreClient implements AutoCloseable {

    private final int rank;
    private final InetSocketAddress master;
    private final Socket socket;
    private final OutputStream out;
    private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();
    private final Thread reader;
    private volatile String failure;
    private volatile CompletableFuture<String> pendingCheck;
    private volatile boolean closing;

    private StoreClient(int rank, InetSocketAddress master, Socket socket) throws IOException {
        this.rank = rank;
        this.master = master;
        this.socket = socket;
        this.out = socket.getOutputStream();
        this.reader = new Thread(this::readLoop, "netreduce-store-client-" + rank);
        reader.setDaemon(true);
        reader.start();
    }

    /** Connects to the store, retrying until {@code timeout} while rank 0 is still starting it. */
    public static StoreClient connect(InetSocketAddress master, int rank, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        IOException last = null;
        do {
            Socket s = new Socket();
            try {
                s.connect(master, (int) Math.max(1, Math.min(timeout.toMillis(), 2000)));
                s.setTcpNoDelay(true);
                StoreClient c = new StoreClient(rank, master, s);
                c.request("HELLO " + rank, timeout);
                return c;
            } catch (IOException e) {
                last = e;
                try {
                    s.close();
                    Thread.sleep(50);
                } catch (IOException | InterruptedException ignored) {
                    if (Thread.currentThread().isInterrupted()) {
                        break;
                    }
                }
            }
        } while (System.nanoTime() < deadline);
        throw new CollectiveException("rank " + rank + ": cannot reach the rendezvous store of rank 0 at " + master
                + " within " + timeout.toMillis() + " ms: " + last, last);
    }

    private void readLoop() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                String body = line.length() > 2 ? line.substring(2) : "";
                switch (line.charAt(0)) {
                    case 'R' -> replies.add(body);
                    case 'C' -> {
                        CompletableFuture<String> c = pendingCheck;
                        if (c != null) {
                            c.complete(body);
                        }
                    }
                    case 'F' -> setFailure(body);
                    default -> setFailure("rendezvous store sent an unknown line: " + line);
                }
            }
            if (!closing) {
                setFailure("the rendezvous store of rank 0 at " + master + " closed the connection (rank 0 gone?)");
            }
        } catch (IOException e) {
            if (!closing) {
                setFailure("lost the connection to the rendezvous store of rank 0 at " + master + ": " + e);
            }
        }
    }

    private void setFailure(String text) {
        if (failure == null) {
            failure = text;
        }
        CompletableFuture<String> c = pendingCheck;
        if (c != null) {
            c.complete("FAILED " + text);
        }
    }

    /** The first failure any rank reported (or a lost store), or null. */
    public String failure() {
        return failure;
    }

    public void set(String key, String value, Duration timeout) {
        request("SET " + key + " " + value, timeout);
    }

    /** Waits until {@code key} is set and returns its value. */
    public String get(String key, Duration timeout) {
        return request("WAIT " + key, timeout);
    }

    /** Ranks that have not yet joined check {@code key}, as the store lists them ("[2, 3]"). */
    public String missing(String key, Duration timeout) {
        return request("WHO " + key, timeout);
    }

    /** Tells every rank that this rank failed, and why (first report wins). */
    public void fail(String text) {
        try {
            send("FAIL " + text.replace('\n', ' '));
        } catch (IOException ignored) {
            // the store is gone: the others will learn that on their own
        }
    }

    /**
     * Starts a check that every rank reports the same {@code value} under {@code key}; the
     * future completes with "OK", "MISMATCH ..." or "FAILED ...". One check at a time.
     */
    public CompletableFuture<String> check(String key, String value) {
        CompletableFuture<String> f = new CompletableFuture<>();
        pendingCheck = f;
        String known = failure;
        if (known != null) {
            f.complete("FAILED " + known);
            return f;
        }
        try {
            send("CHECK " + key + " " + rank + " " + value);
        } catch (IOException e) {
            f.complete("FAILED cannot reach the rendezvous store: " + e);
        }
        return f;
    }

    private synchronized String request(String line, Duration timeout) {
        try {
            send(line);
            String reply = replies.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (reply == null) {
                String f = failure;
                throw new CollectiveException("rank " + rank + ": rendezvous request '" + line.split(" ")[0] + " "
                        + (line.contains(" ") ? line.split(" ")[1] : "") + "' got no answer within "
                        + timeout.toMillis() + " ms" + (f != null ? "; " + f : ""));
            }
            if (reply.startsWith("ERROR")) {
                throw new CollectiveException("rank " + rank + ": rendezvous store refused '" + line + "': " + reply);
            }
            return reply;
        } catch (IOException e) {
            throw new CollectiveException("rank " + rank + ": rendezvous store at " + master + " unreachable: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CollectiveException("rank " + rank + ": interrupted during rendezvous", e);
        }
    }

    private void send(String line) throws IOException {
        // One request per line: a value with a line break (an error text from elsewhere)
        // would otherwise become a second, bogus request and shift every later reply.
        String flat = line.replace('\n', ' ').replace('\r', ' ');
        synchronized (out) {
            out.write((flat + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
        }
    }

    /** Drops the connection without a goodbye, as a crashed process does (tests use it). */
    public void abandon() {
        closing = true;
        try {
            socket.close();
        } catch (IOException ignored) {
            // gone anyway
        }
    }

    /** Leaves gracefully (BYE), so the store does not report this rank as dead. */
    @Override
    public void close() {
        closing = true;
        if (failure == null) {
            try {
                request("BYE", Duration.ofSeconds(2));
            } catch (CollectiveException ignored) {
                // leaving anyway
            }
        }
        try {
            socket.close();
            reader.join(2000);
        } catch (IOException ignored) {
            // closing anyway
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

}
