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
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One rank's connection to the {@link StoreServer}. Requests are synchronous with a
 * deadline; a background reader takes replies, check results and pushed failures, so
 * {@link #failure()} is a field read that costs nothing on the data path.
 *
 * <p>Collectives are verified with {@link #announce}: a one-way line, written from a
 * reused buffer (no allocation, no wait), whose verdict the reader records by sequence
 * number; {@link #opVerdict} reads it without blocking and {@link #awaitOpVerdict} waits
 * for it with a deadline. Verdicts arrive in sequence order (check N completes before
 * check N+1 on every rank, because every rank announces N first).
 */
public final class StoreClient implements AutoCloseable {

    private final int rank;
    private final InetSocketAddress master;
    private final Socket socket;
    private final OutputStream out;
    private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();
    private final Thread reader;
    /** Verdict of a check whose value everyone agreed on. */
    public static final String OK = "OK";
    private static final String OP_PREFIX = "op/";
    private static final int MAX_LINE = 4096;

    private final Map<String, CompletableFuture<String>> pendingChecks = new ConcurrentHashMap<>();
    private final Object verdicts = new Object();
    /** Written only by the caller of {@link #announce} (one thread at a time), under {@code out}. */
    private final byte[] line = new byte[MAX_LINE];
    private volatile String failure;
    /** The group's failure is a mismatch of calls (pushed as {@code M}). */
    private volatile boolean mismatchReported;
    /** The operation the reported mismatch names, or 0 if none was reported or it names none. */
    private volatile long mismatchOp;
    private volatile boolean closing;
    /** Every operation up to this sequence number was verified OK. */
    private volatile long okThrough;
    /** The first operation whose check failed (MISMATCH or FAILED), and the verdict; MAX_VALUE if none. */
    private volatile long badSeq = Long.MAX_VALUE;
    private volatile String badVerdict;
    /** Lines this client sent to the store. */
    private final AtomicLong sent = new AtomicLong();

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
                    case 'C' -> checked(body);
                    case 'F' -> setFailure(body);
                    case 'M' -> mismatched(body);
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

    /**
     * "seq text", as the reporting rank sent it ({@link #reportMismatch}): the group's failure is a
     * mismatch of calls, first seen in operation seq.
     */
    private void mismatched(String body) {
        int space = body.indexOf(' ');
        if (failure == null) {
            mismatchOp = Long.parseLong(body.substring(0, space));
            mismatchReported = true;
        }
        setFailure(body.substring(space + 1));
    }

    /** "key verdict": a named check's future, or an operation's verdict by sequence number. */
    private void checked(String body) {
        int space = body.indexOf(' ');
        String key = space < 0 ? body : body.substring(0, space);
        String verdict = space < 0 ? "" : body.substring(space + 1);
        long seq = opSequence(key);
        if (seq < 0) {
            CompletableFuture<String> c = pendingChecks.remove(key);
            if (c != null) {
                c.complete(verdict);
            }
            return;
        }
        synchronized (verdicts) {
            if (OK.equals(verdict)) {
                okThrough = Math.max(okThrough, seq);
            } else if (seq < badSeq) {
                badVerdict = verdict;
                badSeq = seq;
            }
            verdicts.notifyAll();
        }
    }

    private static long opSequence(String key) {
        if (!key.startsWith(OP_PREFIX)) {
            return -1;
        }
        try {
            return Long.parseLong(key.substring(OP_PREFIX.length()));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private void setFailure(String text) {
        synchronized (verdicts) {
            if (failure == null) {
                failure = text;
            }
            verdicts.notifyAll();
        }
        for (String key : pendingChecks.keySet()) {
            CompletableFuture<String> c = pendingChecks.remove(key);
            if (c != null) {
                c.complete("FAILED " + text);
            }
        }
    }

    /** Lines sent to the store so far (requests, announcements, reports). */
    public long messagesSent() {
        return sent.get();
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

    /**
     * True if the group's first failure was reported with {@link #reportMismatch}: ranks
     * called different collectives.
     */
    public boolean mismatchReported() {
        return mismatchReported;
    }

    /**
     * The operation a mismatch report named ({@link #reportMismatch}), or 0 if the group's
     * failure is not a mismatch.
     */
    public long mismatchOp() {
        return mismatchReported ? mismatchOp : 0;
    }

    /**
     * Tells every rank that the ranks called different collectives, first seen in operation
     * {@code seq} (first failure report wins): each then announces its call, so that every
     * rank can list them all. A rank still in an earlier operation can finish it first.
     */
    public void reportMismatch(long seq, String text) {
        try {
            send("MISMATCH " + seq + " " + text.replace('\n', ' '));
        } catch (IOException ignored) {
            // the store is gone: the others will learn that on their own
        }
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
     * Starts a check that every rank reports the same {@code value} under {@code key} (not
     * of the form "op/N", which {@link #announce} uses); the future completes with "OK",
     * "MISMATCH ..." or "FAILED ...".
     */
    public CompletableFuture<String> check(String key, String value) {
        if (opSequence(key) >= 0) {
            throw new IllegalArgumentException("check key '" + key + "' is reserved for announce()");
        }
        CompletableFuture<String> f = new CompletableFuture<>();
        pendingChecks.put(key, f);
        String known = failure;
        if (known != null) {
            pendingChecks.remove(key);
            f.complete("FAILED " + known);
            return f;
        }
        try {
            send("CHECK " + key + " " + rank + " " + value);
        } catch (IOException e) {
            pendingChecks.remove(key);
            f.complete("FAILED cannot reach the rendezvous store: " + e);
        }
        return f;
    }

    /**
     * Announces that this rank runs operation {@code seq} (1, 2, ... in call order) described
     * by {@code value}, and returns at once; the store compares every rank's description and
     * answers asynchronously (see {@link #opVerdict}).
     * Writes from a reused buffer: no allocation. A write failure is recorded as this
     * client's failure.
     */
    public void announce(long seq, CharSequence value) {
        synchronized (out) {
            int n = ascii("CHECK ", 0);
            n = ascii(OP_PREFIX, n);
            n = number(seq, n);
            line[n++] = ' ';
            n = number(rank, n);
            line[n++] = ' ';
            n = ascii(value, n);
            line[n++] = '\n';
            try {
                out.write(line, 0, n);
                out.flush();
                sent.incrementAndGet();
            } catch (IOException e) {
                setFailure("cannot reach the rendezvous store of rank 0 at " + master + ": " + e);
            }
        }
    }

    /** Copies ASCII text into {@link #line} (other characters and line breaks become '?'), truncating at its end. */
    private int ascii(CharSequence text, int at) {
        int n = at;
        for (int i = 0; i < text.length() && n < MAX_LINE - 24; i++) {
            char c = text.charAt(i);
            line[n++] = c >= ' ' && c < 127 ? (byte) c : (byte) '?';
        }
        return n;
    }

    private int number(long v, int at) {
        if (v < 0) {
            line[at++] = '-';
            v = -v;
        }
        long div = 1;
        while (v / div >= 10) {
            div *= 10;
        }
        int n = at;
        for (; div > 0; div /= 10) {
            line[n++] = (byte) ('0' + (v / div) % 10);
        }
        return n;
    }

    /**
     * The verdict on operation {@code seq} so far, without waiting: {@link #OK}, the first
     * failed verdict at or before {@code seq} ("MISMATCH ..." / "FAILED ..."), the reported
     * failure as "FAILED ...", or null while the store has not answered.
     */
    public String opVerdict(long seq) {
        if (badSeq <= seq) {
            return badVerdict;
        }
        if (okThrough >= seq) {
            return OK;
        }
        String f = failure;
        return f != null ? "FAILED " + f : null;
    }

    /** The sequence number of the first operation whose check failed, or MAX_VALUE. */
    public long firstBadOp() {
        return badSeq;
    }

    /** Like {@link #opVerdict} but waits up to {@code millis} for the answer; null if none came. */
    public String awaitOpVerdict(long seq, long millis) {
        return awaitVerdict(() -> opVerdict(seq), millis);
    }

    /**
     * The store's own verdict on operation {@code seq} ({@link #OK} or "MISMATCH ..."),
     * waiting up to {@code millis} for it even after a failure was reported (which
     * {@link #awaitOpVerdict} returns at once); null if none came.
     */
    public String awaitCheckVerdict(long seq, long millis) {
        return awaitVerdict(() -> badSeq <= seq ? badVerdict : okThrough >= seq ? OK : null, millis);
    }

    /** Waits up to {@code millis} until {@code verdict} (read under the verdicts' lock) is not null. */
    private String awaitVerdict(java.util.function.Supplier<String> verdict, long millis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        synchronized (verdicts) {
            String v;
            while ((v = verdict.get()) == null) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(verdicts, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return null;
                }
            }
            return v;
        }
    }

    private synchronized String request(String line, Duration timeout) {
        try {
            send(line);
            // Wait in slices: when another rank reports a failure (e.g. it could not join), stop
            // waiting for an answer that may never come and say why.
            long deadline = System.nanoTime() + timeout.toNanos();
            String reply = null;
            while (reply == null && System.nanoTime() < deadline) {
                reply = replies.poll(Math.min(100, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)),
                        TimeUnit.MILLISECONDS);
                if (reply == null && failure != null && !line.startsWith("BYE")) {
                    throw new CollectiveException("rank " + rank + ": gave up waiting for the rendezvous store ('"
                            + line.split(" ")[0] + "'): " + failure);
                }
            }
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
            sent.incrementAndGet();
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
