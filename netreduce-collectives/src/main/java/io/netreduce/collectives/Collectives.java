package io.netreduce.collectives;

import io.netreduce.collectives.engine.GroupCommunicator;
import io.netreduce.collectives.rendezvous.StoreServer;
import io.netreduce.collectives.spi.CommunicatorProvider;
import io.netreduce.wire.ina.InaHeader;
import java.io.IOException;
import java.net.InetSocketAddress;
import io.netreduce.collectives.algorithm.DirectBuffers;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** Entry point: opens communicators through the backends found by {@link ServiceLoader}. */
public final class Collectives {
    /**
     * The byte order tensors travel in (little-endian, the wire's payload order): a direct
     * buffer in this order is registered once and used in place; any other buffer is staged
     * through registered memory, which costs a copy each way.
     */
    public static final ByteOrder TENSOR_ORDER = InaHeader.PAYLOAD_ORDER;

    private Collectives() {
    }

    /** A tensor of {@code elements} floats that every algorithm uses in place (direct, {@link #TENSOR_ORDER}). */
    public static FloatBuffer allocateTensor(int elements) {
        return DirectBuffers.allocate(Math.multiplyExact(elements, Float.BYTES)).order(TENSOR_ORDER).asFloatBuffer();
    }

    /** Every backend on the class path. */
    public static List<CommunicatorProvider> providers() {
        List<CommunicatorProvider> list = new ArrayList<>();
        ServiceLoader.load(CommunicatorProvider.class, Collectives.class.getClassLoader()).forEach(list::add);
        return list;
    }

    /** The backend called {@code name}, or an exception listing the known names. */
    public static CommunicatorProvider provider(String name) {
        List<String> known = new ArrayList<>();
        for (CommunicatorProvider p : providers()) {
            if (p.name().equalsIgnoreCase(name)) {
                return p;
            }
            known.add(p.name());
        }
        throw new IllegalArgumentException("unknown collectives backend '" + name + "'; known backends: " + known);
    }

    /** Opens a communicator with the backend named by {@link CommunicatorConfig#algorithm()}. */
    public static Communicator open(CommunicatorConfig config) {
        return open(config.algorithm(), config);
    }

    /** Opens a communicator with the named backend. */
    public static Communicator open(String backend, CommunicatorConfig config) {
        return provider(backend).open(config);
    }

    /**
     * Opens {@code worldSize} communicators in this process (for tests and single-machine
     * use): the rendezvous store listens on an ephemeral loopback port owned by rank 0, and
     * rank r's device binds 127.0.0.(r+2). {@code template} supplies everything else
     * (algorithm, transport, switch, window, ...); its rank, size and master are replaced.
     */
    public static List<Communicator> openLocal(int worldSize, CommunicatorConfig template) {
        if (worldSize < 1) {
            throw new IllegalArgumentException("world size must be at least 1: " + worldSize);
        }
        StoreServer server;
        try {
            server = new StoreServer(new InetSocketAddress("127.0.0.1", 0), worldSize);
        } catch (IOException e) {
            throw new CollectiveException("cannot start an in-process rendezvous store: " + e, e);
        }
        int port = server.address().getPort();
        ExecutorService pool = Executors.newFixedThreadPool(worldSize);
        List<Future<Communicator>> opening = new ArrayList<>();
        for (int r = 0; r < worldSize; r++) {
            CommunicatorConfig c = template.toBuilder().rank(r).worldSize(worldSize).masterAddress("127.0.0.1")
                    .masterPort(port).build();
            StoreServer owned = r == 0 ? server : null;
            opening.add(pool.submit(() -> GroupCommunicator.open(c, owned)));
        }
        List<Communicator> opened = new ArrayList<>();
        RuntimeException failure = null;
        for (Future<Communicator> f : opening) {
            try {
                opened.add(f.get());
            } catch (ExecutionException e) {
                if (failure == null) {
                    failure = e.getCause() instanceof RuntimeException re ? re
                            : new CollectiveException(String.valueOf(e.getCause()), e.getCause());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure = new CollectiveException("interrupted while opening communicators", e);
                break;
            }
        }
        pool.shutdownNow();
        if (failure != null) {
            opened.forEach(Communicator::close);
            server.close();
            throw failure;
        }
        return opened;
    }
}
