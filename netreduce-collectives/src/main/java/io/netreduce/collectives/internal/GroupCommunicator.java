package io.netreduce.collectives.internal;

import io.netreduce.collectives.CollectiveException;
import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.ReduceOp;
import io.netreduce.collectives.rendezvous.StoreClient;
import io.netreduce.collectives.rendezvous.StoreServer;
import io.netreduce.host.HostTimeoutException;
import io.netreduce.host.MessagePlan;
import io.netreduce.host.ProgressGuard;
import io.netreduce.host.RingSettings;
import io.netreduce.host.WindowedAllReduce;
import io.netreduce.verbs.roce.InaHeader;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The communicator behind both built-in backends. Operations run one at a time on a
 * worker thread, in call order. Each one, while its data moves, asks the rendezvous store
 * (asynchronously) whether every rank called the same collective with the same length, so
 * a length mismatch is reported by name on every rank instead of hanging; a failure on
 * any rank, or a rank that dies, is pushed by the store to every rank's progress guard.
 */
public final class GroupCommunicator implements Communicator {
    private static final Logger LOG = LoggerFactory.getLogger(GroupCommunicator.class);
    /** How long a failing rank waits for the length check's verdict, to report the real cause. */
    private static final long VERDICT_WAIT_MS = 1000;

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
    private final FloatBuffer barrierTensor = ByteBuffer.allocateDirect(4).order(MessagePlan.PAYLOAD_ORDER)
            .asFloatBuffer();
    private final ProgressGuard guard = this::checkProgress;
    private volatile boolean closed;
    private volatile CollectiveException broken;
    private long opSeq;
    private String opName = "";
    private CompletableFuture<String> verdict;

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
        join(allReduceAsync(tensor, op));
    }

    @Override
    public CompletableFuture<Void> allReduceAsync(FloatBuffer tensor, ReduceOp op) {
        writable(tensor, "tensor");
        Objects.requireNonNull(op, "op");
        return submit("allReduce(" + tensor.remaining() + ")", () -> reduce(tensor, tensor, op));
    }

    @Override
    public void allReduce(FloatBuffer input, FloatBuffer output, ReduceOp op) {
        join(allReduceAsync(input, output, op));
    }

    @Override
    public CompletableFuture<Void> allReduceAsync(FloatBuffer input, FloatBuffer output, ReduceOp op) {
        Objects.requireNonNull(input, "input");
        writable(output, "output");
        Objects.requireNonNull(op, "op");
        if (input.remaining() != output.remaining()) {
            throw new IllegalArgumentException("allReduce input has " + input.remaining() + " elements but output has "
                    + output.remaining() + "; they must be equal");
        }
        FloatBuffer in = Placement.sameElements(input, output) ? output : input;
        return submit("allReduce(" + output.remaining() + ")", () -> reduce(in, output, op));
    }

    @Override
    public void broadcast(FloatBuffer tensor, int root) {
        writable(tensor, "tensor");
        if (root < 0 || root >= size) {
            throw new IllegalArgumentException("root " + root + " is outside world of size " + size);
        }
        // A sum in which every other rank adds -0.0, the additive identity of IEEE floats,
        // reproduces the root's bits on every rank (NaN payloads aside) through either algorithm.
        join(submit("broadcast(" + tensor.remaining() + ", root " + root + ")", () -> {
            if (rank != root) {
                fill(tensor, tensor.position(), tensor.remaining());
            }
            reduce(tensor, tensor, ReduceOp.SUM);
        }));
    }

    @Override
    public void allGather(FloatBuffer input, FloatBuffer output) {
        Objects.requireNonNull(input, "input");
        writable(output, "output");
        if ((long) input.remaining() * size != output.remaining()) {
            throw new IllegalArgumentException("allGather output must hold size × input = " + size + " × "
                    + input.remaining() + " elements, not " + output.remaining());
        }
        int m = input.remaining();
        join(submit("allGather(" + m + ")", () -> {
            fill(output, output.position(), output.remaining());
            output.put(output.position() + rank * m, input, input.position(), m);
            reduce(output, output, ReduceOp.SUM);
        }));
    }

    @Override
    public void barrier() {
        checkOpen();
        join(submit("barrier", () -> reduce(barrierTensor, barrierTensor, ReduceOp.SUM)));
    }

    private static void fill(FloatBuffer b, int from, int count) {
        for (int i = from; i < from + count; i++) {
            b.put(i, -0.0f);
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
            ring.run(memory.inputRegion(), memory.inputOffset(), memory.outputRegion(), memory.outputOffset(), n,
                    guard);
            memory.unstageWhole();
        }
        if (op == ReduceOp.AVG) {
            float p = size;
            for (int i = output.position(); i < output.limit(); i++) {
                output.put(i, output.get(i) / p);
            }
        }
    }

    private CompletableFuture<Void> submit(String name, Runnable body) {
        checkOpen();
        CompletableFuture<Void> f = new CompletableFuture<>();
        try {
            worker.execute(() -> run(name, body, f));
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("communicator of rank " + rank + " is closed");
        }
        return f;
    }

    private void run(String name, Runnable body, CompletableFuture<Void> f) {
        if (broken != null) {
            f.completeExceptionally(new CollectiveException("rank " + rank + ": communicator is broken by an earlier "
                    + "failure: " + broken.getMessage(), broken));
            return;
        }
        if (closed) {
            f.completeExceptionally(new CollectiveException("rank " + rank + ": communicator closed before " + name
                    + " ran"));
            return;
        }
        opSeq++;
        opName = name;
        try {
            if (store != null) {
                verdict = store.check("op/" + opSeq, name);
                if (netreduce != null) {
                    // Through the switch a rank's SEND is acknowledged only once every rank has
                    // sent that message, so a rank arriving late by more than the transport's
                    // retry budget (ACK timeout × 8) would make the early ones give up. Start
                    // together: wait for every rank's agreement first (one store round trip).
                    requireAgreement(config.timeout().toMillis());
                }
            }
            body.run();
            if (store != null) {
                requireAgreement(config.timeout().toMillis());
            }
            f.complete(null);
        } catch (RuntimeException e) {
            CollectiveException ce = explain(e);
            broken = ce;
            f.completeExceptionally(ce);
        }
    }

    private void requireAgreement(long millis) {
        String v = await(verdict, millis);
        if (v == null) {
            throw new HostTimeoutException("no agreement on collective #" + opSeq + " " + opName + " within "
                    + millis + " ms");
        }
        if (!"OK".equals(v)) {
            throw new CollectiveException(explainVerdict(v));
        }
    }

    /** Called by the data path while it waits: abort on a reported failure, a mismatch, or close. */
    private void checkProgress(long idleNanos) {
        if (store != null) {
            String failure = store.failure();
            if (failure != null) {
                throw new CollectiveException("rank " + rank + ": collective #" + opSeq + " " + opName
                        + " aborted: " + failure);
            }
            CompletableFuture<String> v = verdict;
            if (v != null && v.isDone() && !"OK".equals(v.getNow("OK"))) {
                throw new CollectiveException(explainVerdict(v.getNow("")));
            }
        }
        if (closed) {
            throw new CollectiveException("rank " + rank + ": communicator closed during collective #" + opSeq);
        }
    }

    private String explainVerdict(String v) {
        if (v.startsWith("MISMATCH")) {
            return "rank " + rank + ": ranks called collective #" + opSeq + " with different tensors or operations: "
                    + v.substring("MISMATCH".length()).trim();
        }
        return "rank " + rank + ": collective #" + opSeq + " " + opName + " aborted: "
                + (v.startsWith("FAILED ") ? v.substring(7) : v);
    }

    /**
     * Turns any failure into the clearest message available: a length mismatch if the
     * agreement check says so, else the failure another rank reported, else this rank's own
     * error (which is then reported to every other rank, naming this one).
     */
    private CollectiveException explain(RuntimeException e) {
        if (store == null) {
            return e instanceof CollectiveException ce ? ce
                    : new CollectiveException("rank " + rank + ": " + opName + " failed: " + e.getMessage(), e);
        }
        String v = verdict == null ? null : await(verdict, VERDICT_WAIT_MS);
        if (v != null && v.startsWith("MISMATCH")) {
            return new CollectiveException(explainVerdict(v), e);
        }
        String reported = store.failure();
        if (e instanceof CollectiveException ce) {
            if (reported == null) {
                store.fail(ce.getMessage());
            }
            return ce;
        }
        String message = "rank " + rank + ": collective #" + opSeq + " " + opName + " failed: " + e.getMessage();
        if (e instanceof HostTimeoutException) {
            String missing = "";
            try {
                missing = store.missing("op/" + opSeq, Duration.ofSeconds(2));
            } catch (CollectiveException ignored) {
                // the store is gone too: the message says what we know
            }
            if (!missing.isEmpty() && !"[]".equals(missing)) {
                message += "; ranks that never started it: " + missing;
            }
        }
        if (reported != null) {
            message += "; the group reports: " + reported;
        } else {
            store.fail(message);
        }
        return new CollectiveException(message, e);
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
                new SwitchControl(config.switchControl(), Duration.ofSeconds(5)).deleteRing(ringId);
            } catch (SwitchControl.Refused e) {
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
