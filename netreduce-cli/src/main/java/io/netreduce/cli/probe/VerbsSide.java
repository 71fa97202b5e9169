package io.netreduce.cli.probe;

import io.netreduce.cli.CliException;
import io.netreduce.verbs.Access;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QpEndpoint;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.VerbsException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;

/**
 * One side's verbs resources for a probe: device, protection domain, a send and a receive
 * completion queue, one registered buffer and one RC queue pair. Closed in reverse order.
 */
final class VerbsSide implements AutoCloseable {
    static final int QUEUE_DEPTH = 256;

    final Device device;
    final ProtectionDomain pd;
    final CompletionQueue sendCq;
    final CompletionQueue recvCq;
    final MemoryRegion mr;
    final QueuePair qp;

    private VerbsSide(Device device, ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                      MemoryRegion mr, QueuePair qp) {
        this.device = device;
        this.pd = pd;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.mr = mr;
        this.qp = qp;
    }

    /** Opens everything; a failure closes what was opened and says which step failed. */
    /**
     * {@code callerPolls}: true where this side waits on its completion queue for every
     * completion (the client of both tests, the server of the ping-pong), so a transport may
     * move the data on that thread; false for the bandwidth test's server, whose target is a
     * passive RDMA WRITE region nobody polls, as on a NIC.
     */
    static VerbsSide open(String transport, InetSocketAddress at, int mtu, int bufferBytes, boolean callerPolls) {
        Device device;
        try {
            device = Verbs.open(transport, DeviceOptions.builder()
                    .localAddress(at.getAddress()).port(at.getPort()).callerPolls(callerPolls).build());
        } catch (VerbsException | IllegalArgumentException e) {
            throw new CliException("cannot open a '" + transport + "' device on "
                    + at.getAddress().getHostAddress() + ":" + at.getPort() + ": " + e.getMessage(), e);
        }
        try {
            ProtectionDomain pd = device.allocateProtectionDomain();
            CompletionQueue sendCq = device.createCompletionQueue(QUEUE_DEPTH * 2);
            CompletionQueue recvCq = device.createCompletionQueue(QUEUE_DEPTH * 2);
            ByteBuffer buffer = ByteBuffer.allocateDirect(Math.max(bufferBytes, 1));
            MemoryRegion mr = pd.register(buffer, EnumSet.allOf(Access.class));
            QueuePair qp = pd.createQueuePair(QpAttributes.builder(sendCq, recvCq)
                    .mtu(mtu).maxSendWr(QUEUE_DEPTH).maxRecvWr(QUEUE_DEPTH).maxSge(1).build());
            return new VerbsSide(device, pd, sendCq, recvCq, mr, qp);
        } catch (RuntimeException e) {
            device.close();
            throw e;
        }
    }

    void connect(QpEndpoint remote, Duration timeout) {
        try {
            qp.connect(remote, timeout);
        } catch (VerbsException e) {
            throw new CliException("cannot connect the queue pair to " + remote + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        qp.close();
        mr.close();
        pd.close();
        sendCq.close();
        recvCq.close();
        device.close();
    }
}
