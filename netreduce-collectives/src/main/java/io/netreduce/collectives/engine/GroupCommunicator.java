package io.netreduce.collectives.engine;

import io.netreduce.collectives.Collective;
import io.netreduce.collectives.CollectiveException;
import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.CommunicatorCounters;
import io.netreduce.collectives.EnvironmentVariables;
import io.netreduce.collectives.ReduceOp;
import io.netreduce.collectives.algorithm.AlgorithmUnavailableException;
import io.netreduce.collectives.algorithm.Algorithms;
import io.netreduce.collectives.algorithm.CollectiveAlgorithm;
import io.netreduce.collectives.algorithm.CollectiveCall;
import io.netreduce.collectives.algorithm.ElementType;
import io.netreduce.collectives.algorithm.GroupContext;
import io.netreduce.collectives.algorithm.HostLayout;
import io.netreduce.collectives.algorithm.hierarchical.HierarchicalAlgorithm;
import io.netreduce.collectives.algorithm.ProgressGuard;
import io.netreduce.collectives.algorithm.SingleRankAlgorithm;
import io.netreduce.collectives.algorithm.Traffic;
import io.netreduce.collectives.rendezvous.StoreClient;
import io.netreduce.collectives.rendezvous.StoreServer;
import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.Verbs;
import io.netreduce.wire.ina.InaHeader;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The collective engine behind every backend: one {@link CollectiveAlgorithm} does the
 * data movement, and this class keeps the rest. Operations run one at a time, in call
 * order: blocking ones on the caller's thread, asynchronous ones on a worker thread. Each
 * one is described once ({@link CollectiveCall}: sequence number, kind, count, reduction,
 * root) and checked against the other ranks' by {@link OperationAgreement}, in the data
 * path where the algorithm carries calls, so a mismatch is reported by name on every rank
 * instead of hanging; a failure on any rank, or a rank that dies, is pushed by the
 * rendezvous store to every rank's progress guard. Arguments are checked here once for
 * every algorithm, and AVG is a SUM divided here.
 */
public final class GroupCommunicator implements Communicator {
    private static final Logger LOG = LoggerFactory.getLogger(GroupCommunicator.class);

    private final CommunicatorConfig config;
    private final int rank;
    private final int size;
    private final CollectiveAlgorithm algorithm;
    /** What {@link #algorithm()} reports: the name, and why if it is a fallback. */
    private final String algorithmDescription;
    private final TransportCapabilities transport;
    private final StoreServer server;
    private final StoreClient store;
    private final ExecutorService worker;
    private final FloatBuffer barrierTensor = ByteBuffer.allocateDirect(4).order(InaHeader.PAYLOAD_ORDER)
            .asFloatBuffer();
    private final ProgressGuard guard = this::checkProgress;
    /** Held while an operation runs, on the caller's thread or the worker's: one at a time. */
    private final ReentrantLock opLock = new ReentrantLock();
    /** Asynchronous operations submitted and not yet finished. */
    private final AtomicInteger queued = new AtomicInteger();
    /** Checks every collective against the other ranks' (null in a world of one). */
    private final OperationAgreement agreement;
    /** The running (or last) operation, described in place for each call (no allocation). */
    private final CollectiveCall call = new CollectiveCall();
    private final AtomicLongArray completed = new AtomicLongArray(Collective.values().length);
    private final AtomicLong errors = new AtomicLong();
    private volatile boolean closed;
    private volatile CollectiveException broken;
    /** Written under {@link #opLock}. */
    private long opSeq;

    private GroupCommunicator(CommunicatorConfig config, CollectiveAlgorithm algorithm, String algorithmDescription,
                              TransportCapabilities transport, StoreServer server, StoreClient store) {
        this.config = config;
        this.rank = config.rank();
        this.size = config.worldSize();
        this.algorithm = algorithm;
        this.algorithmDescription = algorithmDescription;
        this.transport = transport;
        this.server = server;
        this.store = store;
        this.agreement = store == null ? null : new OperationAgreement(store, rank, config.agreement(), algorithm,
                config.timeout());
        worker = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "netreduce-rank-" + rank);
            t.setDaemon(true);
            return t;
        });
    }

    /** Joins the group {@code config} describes with the algorithm it names. */
    public static GroupCommunicator open(CommunicatorConfig config, StoreServer ownedServer) {
        return open(config, ownedServer, Algorithms.create(config.algorithm()));
    }

    /**
     * Joins the group described by {@code config} with {@code requested} (not yet joined).
     * Rank 0 hosts the rendezvous store unless {@code ownedServer} is given (then this
     * communicator owns it). An algorithm the transport cannot carry, or one the group learns
     * it cannot run (no switch, the switch refused), fails here on every rank with the reason,
     * unless the configuration names a fallback, which then runs instead, with a WARN and the
     * reason in {@link #algorithm()}.
     */
    public static GroupCommunicator open(CommunicatorConfig config, StoreServer ownedServer,
                                         CollectiveAlgorithm requested) {
        if (config.worldSize() == 1) {
            // A world of one: the result is the tensor itself, no network needed.
            closeQuietly(ownedServer);
            return new GroupCommunicator(config, new SingleRankAlgorithm(requested.name()), requested.name(),
                    TransportCapabilities.of(config.transport()), null, null);
        }
        TransportCapabilities transport = Verbs.provider(config.transport()).capabilities();
        CollectiveAlgorithm algorithm = requested;
        String fallbackReason = null;
        String unsuitable = requested.unsupported(ReduceOp.SUM, ElementType.FLOAT32, transport);
        if (unsuitable != null) {
            algorithm = fallback(config, requested, transport, unsuitable);
            fallbackReason = unsuitable;
        }
        StoreServer server = ownedServer;
        StoreClient store = null;
        try {
            InetSocketAddress master = new InetSocketAddress(config.masterAddress(), config.masterPort());
            if (server == null && config.rank() == 0) {
                server = new StoreServer(master, config.worldSize());
            }
            store = StoreClient.connect(master, config.rank(), config.timeout());
            HostLayout layout = HostLayout.discover(config, store);
            algorithm = arrange(config, layout, algorithm);
            try {
                algorithm.join(new GroupContext(config, store, 0, layout));
            } catch (AlgorithmUnavailableException e) {
                String reason = "algorithm '" + algorithm.name() + "' cannot run for this group: " + e.getMessage();
                algorithm = arrange(config, layout, fallback(config, flat(algorithm), transport, reason));
                fallbackReason = e.getMessage();
                joinFallback(algorithm, config, store, layout);
            }
            String description = describe(algorithm, requested, fallbackReason);
            GroupCommunicator c = new GroupCommunicator(config, algorithm, description, transport, server, store);
            c.awaitEveryoneReady();
            LOG.info("rank {}/{}: {} over '{}' ready, calls compared {} ({})", c.rank, c.size, description,
                    config.transport(), c.agreement.announcesEveryCall() ? "through the rendezvous store"
                            : "in the data path", config);
            return c;
        } catch (IOException e) {
            cleanUp(store, algorithm, server, config);
            throw new CollectiveException("rank 0: cannot host the rendezvous store at " + config.masterAddress()
                    + ":" + config.masterPort() + ": " + e, e);
        } catch (RuntimeException e) {
            if (store != null) {
                store.fail("rank " + config.rank() + " could not join: " + e.getMessage());
            }
            cleanUp(store, algorithm, server, config);
            throw e instanceof CollectiveException || e instanceof IllegalArgumentException ? e
                    : new CollectiveException("rank " + config.rank() + " could not join the group: " + e.getMessage(), e);
        }
    }

    /** The configured fallback for {@code failed}, or a {@link CollectiveException} saying why there is none. */
    private static CollectiveAlgorithm fallback(CommunicatorConfig config, CollectiveAlgorithm failed,
                                                TransportCapabilities transport, String reason) {
        String name = config.fallback();
        if (name == null || name.equals(failed.name())) {
            throw new CollectiveException("rank " + config.rank() + ": " + reason
                    + (reason.contains(EnvironmentVariables.FALLBACK) ? "" : "; set " + EnvironmentVariables.FALLBACK
                    + "=ring to run the ring instead"));
        }
        CollectiveAlgorithm fb = Algorithms.create(name);
        String unsuitable = fb.unsupported(ReduceOp.SUM, ElementType.FLOAT32, transport);
        if (unsuitable != null) {
            throw new CollectiveException("rank " + config.rank() + ": " + reason + "; and the fallback cannot run "
                    + "either: " + unsuitable);
        }
        if (config.rank() == 0) {
            LOG.warn("rank 0: falling back from {} to {}: {}", failed.name(), fb.name(), reason);
        } else {
            LOG.info("rank {}: using {}; the group fell back from {}: {}", config.rank(), fb.name(), failed.name(),
                    reason);
        }
        return fb;
    }

    /**
     * What {@link #algorithm()} reports: "ring", "hierarchical-netreduce: shared memory within
     * ...", and for a fallback why, e.g. "ring (fallback from netreduce: no switch ...)".
     */
    private static String describe(CollectiveAlgorithm now, CollectiveAlgorithm requested, String fallbackReason) {
        String what = now instanceof HierarchicalAlgorithm h ? h.describe() : now.name();
        return fallbackReason == null ? what : what + " (fallback from " + requested.name() + ": " + fallbackReason + ")";
    }

    /**
     * {@code algorithm} itself, or a {@link HierarchicalAlgorithm} running it between hosts
     * when ranks share hosts (every host the same number of them) and the configuration allows it.
     */
    private static CollectiveAlgorithm arrange(CommunicatorConfig config, HostLayout layout,
                                               CollectiveAlgorithm algorithm) {
        int perHost = layout.ranksPerHost();
        if (perHost == 1) {
            return algorithm;
        }
        if (!config.hierarchical()) {
            if (config.rank() == 0) {
                LOG.info("rank 0: ranks share hosts ({}) but {}=off: {} runs flat over every rank", layout,
                        EnvironmentVariables.HIERARCHICAL, algorithm.name());
            }
            return algorithm;
        }
        if (perHost < 0) {
            if (config.rank() == 0) {
                LOG.info("rank 0: hosts hold different numbers of ranks ({}), so {} runs flat over every rank",
                        layout, algorithm.name());
            }
            return algorithm;
        }
        if (config.rank() == 0) {
            LOG.info("rank 0: {} ({}): shared memory within each host, {} across hosts", layout, layout.source(),
                    algorithm.name());
        }
        return new HierarchicalAlgorithm(algorithm);
    }

    /** The algorithm a hierarchical one runs between hosts, or {@code a} itself. */
    private static CollectiveAlgorithm flat(CollectiveAlgorithm a) {
        return a instanceof HierarchicalAlgorithm h ? h.across() : a;
    }

    private static void joinFallback(CollectiveAlgorithm fallback, CommunicatorConfig config, StoreClient store,
                                     HostLayout layout) {
        try {
            fallback.join(new GroupContext(config, store, 1, layout));
        } catch (AlgorithmUnavailableException e) {
            throw new CollectiveException("rank " + config.rank() + ": the fallback algorithm '" + fallback.name()
                    + "' cannot run either: " + e.getMessage(), e);
        }
    }

    private void awaitEveryoneReady() {
        String v = await(store.check("ready", "connected"), config.timeout().toMillis());
        if (!"OK".equals(v)) {
            throw new CollectiveException("rank " + rank + ": setup failed: "
                    + (v == null ? "ranks " + store.missing("ready", Duration.ofSeconds(5)) + " never got ready" : v));
        }
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public String algorithm() {
        return algorithmDescription;
    }

    @Override
    public String transport() {
        return config.transport();
    }

    @Override
    public CommunicatorCounters counters() {
        long[] counts = new long[completed.length()];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = completed.get(i);
        }
        Traffic t = closed ? Traffic.NONE : algorithm.traffic();
        return new CommunicatorCounters(rank, algorithm.name(), config.transport(), counts, t.bytesSent(),
                t.bytesReceived(), t.packetsSent(), t.packetsReceived(), t.retransmittedPackets(), t.rnrNaksReceived(),
                t.waitNanos(),
                errors.get(), store == null ? 0 : store.messagesSent());
    }

    @Override
    public void allReduce(FloatBuffer tensor, ReduceOp op) {
        writable(tensor, "tensor");
        supported(op);
        call(Collective.ALL_REDUCE, tensor, tensor, op, -1);
    }

    @Override
    public CompletableFuture<Void> allReduceAsync(FloatBuffer tensor, ReduceOp op) {
        writable(tensor, "tensor");
        supported(op);
        return submit(Collective.ALL_REDUCE, tensor, tensor, op, -1);
    }

    @Override
    public void allReduce(FloatBuffer input, FloatBuffer output, ReduceOp op) {
        FloatBuffer in = outOfPlaceInput(input, output, op);
        call(Collective.ALL_REDUCE, in, output, op, -1);
    }

    @Override
    public CompletableFuture<Void> allReduceAsync(FloatBuffer input, FloatBuffer output, ReduceOp op) {
        FloatBuffer in = outOfPlaceInput(input, output, op);
        return submit(Collective.ALL_REDUCE, in, output, op, -1);
    }

    /** Refuses, before anything is sent, an operation this group's algorithm cannot compute. */
    private void supported(ReduceOp op) {
        Objects.requireNonNull(op, "op");
        String why = algorithm.unsupported(op, ElementType.FLOAT32, transport);
        if (why != null) {
            throw new IllegalArgumentException(why);
        }
    }

    /** Checks an out-of-place call's arguments; returns the input to use (the output itself for two views of it). */
    private FloatBuffer outOfPlaceInput(FloatBuffer input, FloatBuffer output, ReduceOp op) {
        Objects.requireNonNull(input, "input");
        writable(output, "output");
        supported(op);
        if (input.remaining() != output.remaining()) {
            throw new IllegalArgumentException("allReduce input has " + input.remaining() + " elements but output has "
                    + output.remaining() + "; they must be equal");
        }
        return Placement.sameElements(input, output) ? output : input;
    }

    @Override
    public void broadcast(FloatBuffer tensor, int root) {
        writable(tensor, "tensor");
        if (root < 0 || root >= size) {
            throw new IllegalArgumentException("root " + root + " is outside world of size " + size);
        }
        call(Collective.BROADCAST, tensor, tensor, ReduceOp.SUM, root);
    }

    @Override
    public void allGather(FloatBuffer input, FloatBuffer output) {
        Objects.requireNonNull(input, "input");
        writable(output, "output");
        if ((long) input.remaining() * size != output.remaining()) {
            throw new IllegalArgumentException("allGather output must hold size × input = " + size + " × "
                    + input.remaining() + " elements, not " + output.remaining());
        }
        call(Collective.ALL_GATHER, input, output, ReduceOp.SUM, -1);
    }

    @Override
    public void reduceScatter(FloatBuffer input, FloatBuffer output, ReduceOp op) {
        Objects.requireNonNull(input, "input");
        writable(output, "output");
        supported(op);
        if ((long) output.remaining() * size != input.remaining()) {
            throw new IllegalArgumentException("reduceScatter input must hold size × output = " + size + " × "
                    + output.remaining() + " elements, not " + input.remaining());
        }
        call(Collective.REDUCE_SCATTER, input, output, op, -1);
    }

    @Override
    public void barrier() {
        checkOpen();
        call(Collective.BARRIER, barrierTensor, barrierTensor, ReduceOp.SUM, -1);
    }

    /** The operation's own work, on the thread that runs it. {@code in == out} for in place. */
    private void body(CollectiveCall c, FloatBuffer in, FloatBuffer out) {
        switch (c.kind()) {
            case ALL_REDUCE, BARRIER -> algorithm.allReduce(c, in, out);
            case REDUCE_SCATTER -> algorithm.reduceScatter(c, in, out);
            case ALL_GATHER -> algorithm.allGather(c, in, out);
            case BROADCAST -> algorithm.broadcast(c, in);
            default -> throw new IllegalStateException("no such collective: " + c.kind());
        }
        // The algorithms combine with SUM, MAX or MIN; AVG is the sum divided here, the same way on every rank.
        if (c.op() == ReduceOp.AVG) {
            divideBySize(out);
        }
    }

    private void divideBySize(FloatBuffer t) {
        float p = size;
        for (int i = t.position(); i < t.limit(); i++) {
            t.put(i, t.get(i) / p);
        }
    }

    /**
     * A blocking call runs on the caller's thread: handing it to the worker and waiting for
     * it cost two thread wake-ups per call (measured: tens of microseconds idle, milliseconds
     * on a loaded 2-core host). Only when asynchronous operations are still queued does it
     * go through the worker too, behind them, to keep call order.
     */
    private void call(Collective kind, FloatBuffer in, FloatBuffer out, ReduceOp op, int root) {
        if (queued.get() > 0) {
            join(submit(kind, in, out, op, root));
            return;
        }
        lockForOperation();
        try {
            execute(kind, in, out, op, root);
        } finally {
            opLock.unlock();
        }
    }

    private void lockForOperation() {
        try {
            // Another thread's operation may hold it for up to the timeout without progress.
            if (!opLock.tryLock(config.timeout().toMillis() + 1000, TimeUnit.MILLISECONDS)) {
                throw new CollectiveException("rank " + rank + ": another thread's collective did not finish within "
                        + "the timeout (" + config.timeout().toMillis() + " ms)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CollectiveException("rank " + rank + ": interrupted while waiting for another thread's collective",
                    e);
        }
    }

    private CompletableFuture<Void> submit(Collective kind, FloatBuffer in, FloatBuffer out, ReduceOp op, int root) {
        checkOpen();
        CompletableFuture<Void> f = new CompletableFuture<>();
        queued.incrementAndGet();
        try {
            worker.execute(() -> {
                try {
                    lockForOperation();
                    try {
                        execute(kind, in, out, op, root);
                    } finally {
                        opLock.unlock();
                    }
                    f.complete(null);
                } catch (Throwable e) {
                    // Whatever happens, the caller waiting on the future must hear of it.
                    f.completeExceptionally(e);
                } finally {
                    queued.decrementAndGet();
                }
            });
        } catch (RejectedExecutionException e) {
            queued.decrementAndGet();
            throw new IllegalStateException("communicator of rank " + rank + " is closed");
        }
        return f;
    }

    /**
     * Runs one collective (caller holds {@link #opLock}), checked against the other ranks'
     * calls by {@link OperationAgreement}.
     */
    private void execute(Collective kind, FloatBuffer in, FloatBuffer out, ReduceOp op, int root) {
        if (broken != null) {
            throw new CollectiveException("rank " + rank + ": communicator is broken by an earlier failure: "
                    + broken.getMessage(), broken);
        }
        call.set(opSeq + 1, kind, op, kind == Collective.BARRIER ? 1 : in.remaining(), root, guard);
        if (closed) {
            throw new CollectiveException("rank " + rank + ": communicator closed before " + call + " ran");
        }
        opSeq++;
        try {
            if (agreement != null) {
                agreement.beforeBody(call);
            }
            body(call, in, out);
            if (agreement != null) {
                agreement.afterBody(call);
            }
            completed.incrementAndGet(kind.ordinal());
        } catch (RuntimeException e) {
            errors.incrementAndGet();
            CollectiveException ce = agreement != null ? agreement.explain(e, call)
                    : e instanceof CollectiveException c ? c
                    : new CollectiveException("rank " + rank + ": collective " + call + " failed: " + e.getMessage(), e);
            broken = ce;
            throw ce;
        }
    }

    /** Called by the data path while it waits: abort on a reported failure, a mismatch, or close. */
    private void checkProgress(long idleNanos) {
        if (agreement != null) {
            agreement.checkProgress(call, idleNanos);
        }
        if (closed) {
            throw new CollectiveException("rank " + rank + ": communicator closed during collective #" + call.seq());
        }
    }

    private static String await(CompletableFuture<String> f, long millis) {
        try {
            return f.get(millis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (ExecutionException e) {
            return "FAILED " + e.getCause();
        }
    }

    private static void join(CompletableFuture<Void> f) {
        try {
            f.get();
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof CollectiveException ce) {
                throw new CollectiveException(ce.getMessage(), ce);
            }
            throw new CollectiveException(String.valueOf(c.getMessage()), c);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CollectiveException("interrupted while waiting for a collective", e);
        }
    }

    private void writable(FloatBuffer b, String what) {
        Objects.requireNonNull(b, what);
        if (b.isReadOnly()) {
            throw new IllegalArgumentException(what + " is a read-only buffer; collectives write their result into it");
        }
        checkOpen();
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("communicator of rank " + rank + " is closed");
        }
    }

    /**
     * Waits (bounded) until every rank has finished its collectives before any transport goes
     * away. A collective is done for this rank once its results are in and its own SENDs are
     * acknowledged, but a peer may still be recovering the tail of the same collective: its
     * last packets or their ACK were lost and its go-back-N retransmission needs this rank's
     * receive queue pair to answer and, through the switch, the ring that rank 0 deletes on
     * close. Tearing down first turned one lost tail packet into RETRY_EXC_ERR on the peer.
     * Every rank reaching close() means every rank's sends were acknowledged, so nobody needs
     * the ring after this. The wait goes over the rendezvous store (TCP), not the ring; a
     * failed rank skips it and its failure report ends the others' wait at once.
     */
    private void drainBeforeTeardown() {
        if (store == null || broken != null) {
            return;
        }
        long millis = Math.min(config.timeout().toMillis(), 10_000);
        String v = await(store.check("close", "drained"), millis);
        if (!"OK".equals(v)) {
            LOG.warn("rank {}: closing the transport although not every rank finished its collectives ({})", rank,
                    v == null ? "none after " + millis + " ms" : v);
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        worker.shutdown();
        try {
            if (!worker.awaitTermination(config.timeout().toMillis() + 1000, TimeUnit.MILLISECONDS)) {
                LOG.warn("rank {}: an operation did not stop within the timeout while closing", rank);
                worker.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        boolean idle = false;
        try {
            // A blocking call on another thread sees 'closed' at its next progress check.
            idle = opLock.tryLock(config.timeout().toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!idle) {
            LOG.warn("rank {}: an operation on another thread did not stop within the timeout while closing", rank);
        }
        String lastMismatch = idle && agreement != null && broken == null ? agreement.lastVerdictProblem(call) : null;
        drainBeforeTeardown();
        algorithm.close();
        if (store != null) {
            store.close();
        }
        if (server != null) {
            try {
                if (!server.awaitLeft(size, Math.min(config.timeout().toMillis(), 10_000))) {
                    LOG.warn("rank 0: closing the rendezvous store although not every rank has left");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        closeQuietly(server);
        if (idle) {
            opLock.unlock();
        }
        if (lastMismatch != null) {
            throw new CollectiveException(lastMismatch);
        }
    }

    /** After a failed open: this rank's parts go; a store this rank hosts stays until every rank heard why. */
    private static void cleanUp(StoreClient store, CollectiveAlgorithm algorithm, StoreServer server,
                                CommunicatorConfig config) {
        if (store != null) {
            store.close();
        }
        algorithm.close();
        if (server != null) {
            try {
                server.awaitEveryoneInformed(Math.min(config.timeout().toMillis(), 10_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        closeQuietly(server);
    }

    private static void closeQuietly(StoreServer server) {
        if (server != null) {
            server.close();
        }
    }

    /** Test hook: drops this rank the way a crash does (no goodbye to the store, transport gone). */
    void crash() {
        closed = true;
        worker.shutdownNow();
        if (store != null) {
            store.abandon();
        }
        algorithm.close();
    }
}
