package io.netreduce.collectives.engine;

import io.netreduce.collectives.algorithm.ring.RingAllReduce;
import io.netreduce.collectives.algorithm.RingConnections;
import io.netreduce.collectives.algorithm.RingSetup;
import io.netreduce.wire.control.SwitchControlClient;
import io.netreduce.collectives.algorithm.TensorMemory;

import io.netreduce.collectives.CollectiveException;
import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.ReduceOp;
import io.netreduce.collectives.rendezvous.StoreClient;
import io.netreduce.collectives.rendezvous.StoreServer;
import io.netreduce.collectives.algorithm.MessagePlan;
import io.netreduce.collectives.algorithm.ProgressGuard;
import io.netreduce.collectives.algorithm.netreduce.RingSettings;
import io.netreduce.collectives.algorithm.netreduce.WindowedAllReduce;
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
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The communicator behind both built-in backends. Operations run one at a time, in call
 * order: blocking ones on the caller's thread, asynchronous ones on a worker thread. Each
 * one announces itself to the rendezvous store, which checks (asynchronously) that every
 * rank called the same collective with the same length, so a mismatch is reported by name
 * on every rank instead of hanging; a failure on any rank, or a rank that dies, is pushed
 * by the store to every rank's progress guard.
 */
public final class GroupCommunicator implements Communicator {
    private static final Logger LOG = LoggerFactory.getLogger(GroupCommunicator.class);

    private final CommunicatorConfig config;
    private final int rank;
    private final int size;
    private final String algorithm;
    private final StoreServer server;
    private final StoreClient store;
    private final RingConnections connections;
    private final WindowedAllReduce netreduce;
    private final RingAllReduce ring;
    private final TensorMemory memory;
    private final int ringId;
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
    private volatile boolean closed;
    private volatile CollectiveException broken;
    /** Written under {@link #opLock}; read by error messages. */
    private volatile long opSeq;
    /** The running operation's description, rebuilt in place for each call (no allocation). */
    private final StringBuilder opName = new StringBuilder(64);

    private static final int ALL_REDUCE = 0;
    private static final int BROADCAST = 1;
    private static final int ALL_GATHER = 2;
    private static final int BARRIER = 3;
    private static final int REDUCE_SCATTER = 4;
    /** Where a reduce-scatter's full-length partial results go (grown to the largest input seen). */
    private FloatBuffer scatterScratch;

    private GroupCommunicator(CommunicatorConfig config, String algorithm, StoreServer server, StoreClient store,
                              RingConnections connections, int ringId) {
        this.config = config;
        this.rank = config.rank();
        this.size = config.worldSize();
        this.algorithm = algorithm;
        this.server = server;
        this.store = store;
        this.connections = connections;
        this.ringId = ringId;
        this.agreement = store == null ? null : new OperationAgreement(store, rank, config.agreement(),
                config.timeout());
        if (connections != null) {
            memory = new TensorMemory(connections.pd);
            netreduce = CommunicatorConfig.NETREDUCE.equals(algorithm)
                    ? new WindowedAllReduce(connections.pd, connections.toNext, connections.fromPrev, connections.cq,
                            new RingSettings(ringId, rank, InaHeader.DTYPE_FP32, config.window(),
                                    config.messageBytes(), config.timeout()))
                    : null;
            ring = netreduce == null ? new RingAllReduce(connections.pd, connections.toNext, connections.fromPrev,
                    connections.cq, rank, size, config.ringMessageBytes(), config.ringWindow(), config.timeout()) : null;
        } else {
            memory = null;
            netreduce = null;
            ring = null;
        }
        worker = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "netreduce-rank-" + rank);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Joins the group described by {@code config} with the given algorithm. Rank 0 hosts the
     * rendezvous store unless {@code ownedServer} is given (then this communicator owns it).
     */
    public static GroupCommunicator open(CommunicatorConfig config, StoreServer ownedServer) {
        String requested = config.algorithm();
        if (!CommunicatorConfig.NETREDUCE.equals(requested) && !CommunicatorConfig.RING.equals(requested)) {
            throw new IllegalArgumentException("unknown algorithm '" + requested + "': use netreduce or ring");
        }
        if (config.worldSize() == 1) {
            // A world of one: the sum is the tensor itself, no network needed.
            closeQuietly(ownedServer);
            return new GroupCommunicator(config, requested, null, null, null, 0);
        }
        StoreServer server = ownedServer;
        StoreClient store = null;
        RingConnections conns = null;
        try {
            InetSocketAddress master = new InetSocketAddress(config.masterAddress(), config.masterPort());
            if (server == null && config.rank() == 0) {
                server = new StoreServer(master, config.worldSize());
            }
            store = StoreClient.connect(master, config.rank(), config.timeout());
            RingSetup.Result setup = RingSetup.run(config, store);
            conns = setup.connections();
            GroupCommunicator c = new GroupCommunicator(config, setup.algorithm(), server, store, conns,
                    setup.ringId());
            c.awaitEveryoneReady();
            LOG.info("rank {}/{}: {} all-reduce over '{}' ready ({})", c.rank, c.size, c.algorithm,
                    config.transport(), config);
            return c;
        } catch (IOException e) {
            cleanUp(store, conns, server);
            throw new CollectiveException("rank 0: cannot host the rendezvous store at " + config.masterAddress()
                    + ":" + config.masterPort() + ": " + e, e);
        } catch (RuntimeException e) {
            if (store != null) {
                store.fail("rank " + config.rank() + " could not join: " + e.getMessage());
            }
            cleanUp(store, conns, server);
            throw e instanceof CollectiveException || e instanceof IllegalArgumentException ? e
                    : new CollectiveException("rank " + config.rank() + " could not join the group: " + e.getMessage(), e);
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
        return algorithm;
    }

    @Override
    public String transport() {
        return config.transport();
    }

    @Override
    public void allReduce(FloatBuffer tensor, ReduceOp op) {
        writable(tensor, "tensor");
        supported(op);
        call(ALL_REDUCE, tensor, null, op, -1);
    }

    @Override
    public CompletableFuture<Void> allReduceAsync(FloatBuffer tensor, ReduceOp op) {
        writable(tensor, "tensor");
        supported(op);
        return submit(ALL_REDUCE, tensor, null, op, -1);
    }

    @Override
    public void allReduce(FloatBuffer input, FloatBuffer output, ReduceOp op) {
        call(ALL_REDUCE, outOfPlaceInput(input, output, op), output, op, -1);
    }

    @Override
    public CompletableFuture<Void> allReduceAsync(FloatBuffer input, FloatBuffer output, ReduceOp op) {
        return submit(ALL_REDUCE, outOfPlaceInput(input, output, op), output, op, -1);
    }

    /** Refuses, before anything is sent, an operation this group's algorithm cannot compute. */
    private void supported(ReduceOp op) {
        Objects.requireNonNull(op, "op");
        if (!op.isSum() && netreduce != null) {
            throw new IllegalArgumentException(op + " all-reduce needs the ring algorithm: a NetReduce switch can only "
                    + "add (this communicator uses " + algorithm + ")");
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
        call(BROADCAST, tensor, null, ReduceOp.SUM, root);
    }

    @Override
    public void allGather(FloatBuffer input, FloatBuffer output) {
        Objects.requireNonNull(input, "input");
        writable(output, "output");
        if ((long) input.remaining() * size != output.remaining()) {
            throw new IllegalArgumentException("allGather output must hold size × input = " + size + " × "
                    + input.remaining() + " elements, not " + output.remaining());
        }
        call(ALL_GATHER, input, output, ReduceOp.SUM, -1);
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
        call(REDUCE_SCATTER, input, output, op, -1);
    }

    @Override
    public void barrier() {
        checkOpen();
        call(BARRIER, barrierTensor, null, ReduceOp.SUM, -1);
    }

    private static void fill(FloatBuffer b, int from, int count) {
        for (int i = from; i < from + count; i++) {
            b.put(i, -0.0f);
        }
    }

    /**
     * The operation's own work, on the thread that runs it. For ALL_REDUCE, {@code b} is the
     * output of an out-of-place call (null in place).
     */
    private void body(int kind, FloatBuffer a, FloatBuffer b, ReduceOp op, int root) {
        switch (kind) {
            case ALL_REDUCE -> reduce(a, b == null ? a : b, op);
            case BROADCAST -> {
                // A sum in which every other rank adds -0.0, the additive identity of IEEE floats,
                // reproduces the root's bits on every rank (NaN payloads aside) through either algorithm.
                if (rank != root) {
                    fill(a, a.position(), a.remaining());
                }
                reduce(a, a, ReduceOp.SUM);
            }
            case ALL_GATHER -> gather(a, b);
            case REDUCE_SCATTER -> scatterReduced(a, b, op);
            case BARRIER -> reduce(a, a, ReduceOp.SUM);
            default -> throw new IllegalStateException("unknown operation kind " + kind);
        }
    }

    /** What every rank must agree on: the operation, its tensor length, and its root or reduction. */
    private void describe(StringBuilder out, int kind, FloatBuffer a, FloatBuffer b, ReduceOp op, int root) {
        out.setLength(0);
        switch (kind) {
            case ALL_REDUCE, REDUCE_SCATTER -> {
                out.append(kind == ALL_REDUCE ? "allReduce(" : "reduceScatter(").append(a.remaining());
                if (op != ReduceOp.SUM) {
                    out.append(", ").append(op.name());
                }
                out.append(')');
            }
            case BROADCAST -> out.append("broadcast(").append(a.remaining()).append(", root ").append(root).append(')');
            case ALL_GATHER -> out.append("allGather(").append(a.remaining()).append(')');
            default -> out.append("barrier");
        }
    }

    /**
     * All-gather. The ring runs only its all-gather half, from this rank's own chunk; through
     * the switch, which can only add, it is an all-reduce in which every rank contributes
     * -0.0 (the additive identity of IEEE floats) outside its own chunk.
     */
    private void gather(FloatBuffer input, FloatBuffer output) {
        int m = input.remaining();
        if (ring == null) { // through the switch, or a world of one
            fill(output, output.position(), output.remaining());
        }
        output.put(output.position() + rank * m, input, input.position(), m);
        if (ring == null) {
            reduce(output, output, ReduceOp.SUM);
            return;
        }
        memory.bind(output, output, true);
        ring.gather(memory.outputRegion(), memory.outputOffset(), output.remaining(), guard);
        memory.unstageWhole();
    }

    /**
     * Reduce-scatter. The ring runs only its reduce-scatter half into a registered scratch
     * tensor, whose chunk {@code rank} then holds the result; through the switch it is an
     * all-reduce into the scratch. Either way only this rank's chunk is copied out.
     */
    private void scatterReduced(FloatBuffer input, FloatBuffer output, ReduceOp op) {
        int m = output.remaining();
        int n = input.remaining();
        if (m == 0) {
            return;
        }
        if (size == 1) {
            output.put(output.position(), input, input.position(), m);
            return;
        }
        if (scatterScratch == null || scatterScratch.capacity() < n) {
            scatterScratch = ByteBuffer.allocateDirect(4 * Math.max(n, scatterScratch == null ? 0
                    : 2 * scatterScratch.capacity())).order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();
        }
        FloatBuffer scratch = scatterScratch.duplicate().clear().limit(n);
        ReduceOp combine = op == ReduceOp.AVG ? ReduceOp.SUM : op;
        if (ring != null) {
            memory.bind(input, scratch, true);
            ring.reduceScatter(memory.inputRegion(), memory.inputOffset(), memory.outputRegion(),
                    memory.outputOffset(), n, combine, guard);
        } else {
            reduce(input, scratch, combine);
        }
        output.put(output.position(), scratch, rank * m, m);
        if (op == ReduceOp.AVG) {
            divideBySize(output);
        }
    }

    /** AVG: the same division by P on every rank, after the sum. */
    private void divideBySize(FloatBuffer t) {
        float p = size;
        for (int i = t.position(); i < t.limit(); i++) {
            t.put(i, t.get(i) / p);
        }
    }

    /** Reduces {@code input} into {@code output} (the same buffer for in place). */
    private void reduce(FloatBuffer input, FloatBuffer output, ReduceOp op) {
        int n = output.remaining();
        if (n == 0) {
            return;
        }
        if (size == 1) {
            if (input != output) {
                output.put(output.position(), input, input.position(), n);
            }
            return;
        }
        if (netreduce != null) {
            memory.bind(input, output, false);
            netreduce.run(memory.inputRegion(), memory.inputOffset(), memory.outputRegion(), memory.outputOffset(), n,
                    memory, guard);
        } else {
            memory.bind(input, output, true);
            ring.run(memory.inputRegion(), memory.inputOffset(), memory.outputRegion(), memory.outputOffset(), n, op,
                    guard);
            memory.unstageWhole();
        }
        if (op == ReduceOp.AVG) {
            divideBySize(output);
        }
    }

    /**
     * A blocking call runs on the caller's thread: handing it to the worker and waiting for
     * it cost two thread wake-ups per call (measured: tens of microseconds idle, milliseconds
     * on a loaded 2-core host). Only when asynchronous operations are still queued does it
     * go through the worker too, behind them, to keep call order.
     */
    private void call(int kind, FloatBuffer a, FloatBuffer b, ReduceOp op, int root) {
        if (queued.get() > 0) {
            join(submit(kind, a, b, op, root));
            return;
        }
        lockForOperation();
        try {
            execute(kind, a, b, op, root);
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

    private CompletableFuture<Void> submit(int kind, FloatBuffer a, FloatBuffer b, ReduceOp op, int root) {
        checkOpen();
        CompletableFuture<Void> f = new CompletableFuture<>();
        queued.incrementAndGet();
        try {
            worker.execute(() -> {
                try {
                    lockForOperation();
                    try {
                        execute(kind, a, b, op, root);
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
    private void execute(int kind, FloatBuffer a, FloatBuffer b, ReduceOp op, int root) {
        if (broken != null) {
            throw new CollectiveException("rank " + rank + ": communicator is broken by an earlier failure: "
                    + broken.getMessage(), broken);
        }
        describe(opName, kind, a, b, op, root);
        if (closed) {
            throw new CollectiveException("rank " + rank + ": communicator closed before " + opName + " ran");
        }
        opSeq++;
        try {
            if (agreement != null) {
                agreement.beforeBody(opSeq, opName, netreduce != null);
            }
            body(kind, a, b, op, root);
            if (agreement != null) {
                agreement.afterBody(opSeq, opName);
            }
        } catch (RuntimeException e) {
            CollectiveException ce = agreement != null ? agreement.explain(e, opSeq, opName)
                    : e instanceof CollectiveException c ? c
                    : new CollectiveException("rank " + rank + ": " + opName + " failed: " + e.getMessage(), e);
            broken = ce;
            throw ce;
        }
    }

    /** Called by the data path while it waits: abort on a reported failure, a mismatch, or close. */
    private void checkProgress(long idleNanos) {
        if (agreement != null) {
            agreement.checkProgress(opSeq, opName);
        }
        if (closed) {
            throw new CollectiveException("rank " + rank + ": communicator closed during collective #" + opSeq);
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
        if (store == null || broken != null || size < 2 || (netreduce == null && ring == null)) {
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
        String lastMismatch = idle && agreement != null && broken == null ? agreement.lastVerdictProblem(opSeq, opName)
                : null;
        drainBeforeTeardown();
        if (netreduce != null) {
            netreduce.close();
        }
        if (ring != null) {
            ring.close();
        }
        if (memory != null) {
            memory.close();
        }
        if (store != null) {
            store.close();
        }
        if (netreduce != null && rank == 0) {
            // Free the switch's aggregator memory and connection table entries for the next job.
            try {
                new SwitchControlClient(config.switchControl(), Duration.ofSeconds(5)).deleteRing(ringId);
            } catch (SwitchControlClient.Refused e) {
                LOG.warn("rank 0: could not delete ring {} from the switch: {}", Integer.toUnsignedString(ringId),
                        e.getMessage());
            }
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
        cleanUp(null, connections, server);
        if (idle) {
            opLock.unlock();
        }
        if (lastMismatch != null) {
            throw new CollectiveException(lastMismatch);
        }
    }

    private static void cleanUp(StoreClient store, RingConnections conns, StoreServer server) {
        if (store != null) {
            store.close();
        }
        if (conns != null) {
            conns.close();
        }
        closeQuietly(server);
    }

    private static void closeQuietly(StoreServer server) {
        if (server != null) {
            server.close();
        }
    }

    /** Test hook: drops this rank the way a crash does (no goodbye to the store, device gone). */
    void crash() {
        closed = true;
        worker.shutdownNow();
        if (store != null) {
            store.abandon();
        }
        if (connections != null) {
            connections.close();
        }
    }
}
