package io.netreduce.verbs.disni;

import io.netreduce.verbs.TransportCapabilities;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Counters;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QpEndpoint;
import io.netreduce.verbs.VerbsException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A DiSNI device: an RDMA CM id listening on {@code options.localAddress():options.port()}
 * (the address must belong to an RDMA-capable interface; its verbs context becomes the
 * device), and one event channel for every CM id of this device. A single thread reads
 * that channel with a short timeout and hands each event to the queue pair that owns the
 * id, so no connect step ever waits on DiSNI without a deadline.
 *
 * <p>RDMA CM carries no application data DiSNI 2.1 would show the passive side, so an
 * incoming connect request is matched to a queue pair waiting for a peer at the request's
 * source address, oldest first: connect queue pairs between the same two hosts in the
 * same order on both sides (as a rendezvous does).
 */
final class DisniDevice implements Device {
    private static final Logger LOG = LoggerFactory.getLogger(DisniDevice.class);
    private static final int CM_POLL_MS = 100;
    private static final long STALE_REQUEST_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final DeviceOptions options;
    private final RdmaEventChannel channel;
    private final RdmaCmId listenId;
    private final IbvContext context;
    private final InetSocketAddress bound;
    private final Thread cmThread;
    private final Counters counters = new Counters();
    private final AtomicInteger nextQpn = new AtomicInteger(1);
    private final List<AutoCloseable> children = new CopyOnWriteArrayList<>();
    private final Map<RdmaCmId, DisniQueuePair> owners = Collections.synchronizedMap(new IdentityHashMap<>());
    /** Passive queue pairs waiting for a connect request, oldest first. Guarded by itself. */
    private final Deque<DisniQueuePair> waiting = new ArrayDeque<>();
    /** Connect requests no queue pair has claimed yet, with their arrival time. Guarded by {@link #waiting}. */
    private final Deque<Object[]> unclaimed = new ArrayDeque<>();
    private volatile boolean open = true;

    DisniDevice(DeviceOptions options) {
        this.options = options;
        InetSocketAddress address = new InetSocketAddress(options.localAddress(), options.port());
        RdmaEventChannel ch = null;
        try {
            ch = RdmaEventChannel.createEventChannel();
            RdmaCmId id = ch.createId(RdmaCm.RDMA_PS_TCP);
            id.bindAddr(address);
            IbvContext ctx = id.getVerbs();
            if (ctx == null) {
                throw new VerbsException("disni device cannot open on " + address + ": the address is not on an "
                        + "RDMA-capable interface (check 'rdma link' / 'ibv_devices'; see native/README.md)");
            }
            id.listen(64);
            this.channel = ch;
            this.listenId = id;
            this.context = ctx;
            this.bound = (InetSocketAddress) id.getSource();
        } catch (IOException e) {
            if (ch != null) {
                ch.close();
            }
            throw new VerbsException("disni device cannot open on " + address + " (rdma_bind_addr/rdma_listen): "
                    + e.getMessage() + "; see native/README.md", e);
        }
        cmThread = new Thread(this::cmLoop, "disni-cm-" + bound.getPort());
        cmThread.setDaemon(true);
        cmThread.start();
    }

    InetSocketAddress boundAddress() {
        return bound;
    }

    RdmaEventChannel eventChannel() {
        return channel;
    }

    @Override
    public String providerName() {
        return DisniVerbsProvider.NAME;
    }

    @Override
    public TransportCapabilities capabilities() {
        return DisniVerbsProvider.CAPABILITIES;
    }

    @Override
    public DeviceOptions options() {
        return options;
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() {
        checkOpen();
        try {
            DisniProtectionDomain pd = new DisniProtectionDomain(this, context.allocPd());
            children.add(pd);
            return pd;
        } catch (IOException e) {
            throw new VerbsException("ibv_alloc_pd failed on " + this + ": " + e.getMessage(), e);
        }
    }

    @Override
    public CompletionQueue createCompletionQueue(int capacity) {
        checkOpen();
        DisniCompletionQueue cq = new DisniCompletionQueue(this, context, capacity);
        children.add(cq);
        return cq;
    }

    @Override
    public Counters counters() {
        return counters;
    }

    DisniQueuePair createQueuePair(DisniProtectionDomain pd, QpAttributes attributes) {
        checkOpen();
        return new DisniQueuePair(this, pd, nextQpn.getAndIncrement(), attributes);
    }

    void own(RdmaCmId id, DisniQueuePair qp) {
        owners.put(id, qp);
    }

    void disown(RdmaCmId id) {
        owners.remove(id);
    }

    /** Registers a passive queue pair; returns a connect request already waiting for it, or null. */
    RdmaCmId awaitRequests(DisniQueuePair qp, QpEndpoint remote) {
        synchronized (waiting) {
            for (Iterator<Object[]> it = unclaimed.iterator(); it.hasNext(); ) {
                Object[] r = it.next();
                if (remote.address().equals(((InetSocketAddress) r[1]).getAddress())) {
                    it.remove();
                    return (RdmaCmId) r[0];
                }
            }
            waiting.addLast(qp);
            return null;
        }
    }

    void stopWaiting(DisniQueuePair qp) {
        synchronized (waiting) {
            waiting.remove(qp);
        }
    }

    private void cmLoop() {
        while (open) {
            try {
                RdmaCmEvent event = channel.getCmEvent(CM_POLL_MS);
                if (event == null) {
                    continue;
                }
                int type = event.getEvent();
                RdmaCmId id = event.getConnIdPriv();
                event.ackEvent();
                if (type == DisniMapping.CM_CONNECT_REQUEST) {
                    onConnectRequest(id);
                } else {
                    DisniQueuePair qp = owners.get(id);
                    if (qp != null) {
                        qp.onCmEvent(type);
                    } else {
                        LOG.debug("{}: {} for an id no queue pair owns", this, DisniMapping.cmEventName(type));
                    }
                }
            } catch (IOException | RuntimeException e) {
                if (open) {
                    // Never swallow: a dead CM thread would leave every later connect waiting to its deadline.
                    LOG.error("{}: reading RDMA CM events failed", this, e);
                    sleepQuietly(CM_POLL_MS);
                }
            }
        }
    }

    private void onConnectRequest(RdmaCmId id) throws IOException {
        InetSocketAddress from = (InetSocketAddress) id.getDestination();
        DisniQueuePair match = null;
        synchronized (waiting) {
            for (DisniQueuePair qp : waiting) {
                if (qp.connectingTo() != null && qp.connectingTo().address().equals(from.getAddress())) {
                    match = qp;
                    break;
                }
            }
            if (match != null) {
                waiting.remove(match);
            } else {
                long now = System.nanoTime();
                unclaimed.removeIf(r -> {
                    if (now - (long) r[2] > STALE_REQUEST_NANOS) {
                        destroyQuietly((RdmaCmId) r[0]);
                        return true;
                    }
                    return false;
                });
                unclaimed.addLast(new Object[] {id, from, now});
                LOG.debug("{}: connect request from {} waits for a queue pair to connect to that host", this, from);
                return;
            }
        }
        match.onConnectRequest(id);
    }

    static void destroyQuietly(RdmaCmId id) {
        try {
            id.destroyId();
        } catch (IOException | RuntimeException e) {
            LOG.debug("rdma_destroy_id failed", e);
        }
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void checkOpen() {
        if (!open) {
            throw new VerbsException(this + " is closed");
        }
    }

    @Override
    public void close() {
        if (!open) {
            return;
        }
        open = false;
        for (AutoCloseable c : children) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.warn("closing {} failed", c, e);
            }
        }
        try {
            cmThread.join(2 * CM_POLL_MS + 1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (waiting) {
            for (Object[] r : unclaimed) {
                destroyQuietly((RdmaCmId) r[0]);
            }
            unclaimed.clear();
        }
        destroyQuietly(listenId);
        try {
            channel.destroyEventChannel();
        } catch (IOException e) {
            LOG.warn("rdma_destroy_event_channel failed", e);
        }
    }

    @Override
    public String toString() {
        return "disni device " + bound;
    }
}
