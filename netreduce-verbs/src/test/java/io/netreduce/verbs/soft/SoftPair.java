package io.netreduce.verbs.soft;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.Verbs;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.function.UnaryOperator;

/** Test fixture: two soft devices on their own loopback addresses with one connected QP each. */
final class SoftPair implements AutoCloseable {
    static final Duration CONNECT = Duration.ofSeconds(5);

    final Host a;
    final Host b;

    static final class Host implements AutoCloseable {
        final Device device;
        final ProtectionDomain pd;
        final CompletionQueue sendCq;
        final CompletionQueue recvCq;
        QueuePair qp;

        Host(DeviceOptions options) {
            device = Verbs.open("soft", options);
            pd = device.allocateProtectionDomain();
            sendCq = device.createCompletionQueue(4096);
            recvCq = device.createCompletionQueue(4096);
        }

        QueuePair createQp(UnaryOperator<QpAttributes.Builder> attrs) {
            qp = pd.createQueuePair(attrs.apply(QpAttributes.builder(sendCq, recvCq)).build());
            return qp;
        }

        MemoryRegion register(int bytes) {
            return pd.register(ByteBuffer.allocateDirect(bytes),
                    EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
        }

        @Override
        public void close() {
            device.close();
        }
    }

    SoftPair(DeviceOptions.Builder aOptions, DeviceOptions.Builder bOptions, UnaryOperator<QpAttributes.Builder> attrs) {
        this(aOptions, bOptions, attrs, attrs);
    }

    SoftPair(DeviceOptions.Builder aOptions, DeviceOptions.Builder bOptions, UnaryOperator<QpAttributes.Builder> aAttrs,
             UnaryOperator<QpAttributes.Builder> bAttrs) {
        a = new Host(aOptions.build());
        Host hb = null;
        try {
            hb = new Host(bOptions.build());
            a.createQp(aAttrs);
            hb.createQp(bAttrs);
            a.qp.connect(hb.qp.localEndpoint(), CONNECT);
            hb.qp.connect(a.qp.localEndpoint(), CONNECT);
        } catch (RuntimeException e) {
            a.close();
            if (hb != null) {
                hb.close();
            }
            throw e;
        }
        b = hb;
    }

    private SoftPair(Host a, Host b) {
        this.a = a;
        this.b = b;
    }

    /** The same two hosts with roles swapped (closing either view closes both). */
    SoftPair reversed() {
        return new SoftPair(b, a);
    }

    @Override
    public void close() {
        try {
            a.close();
        } finally {
            b.close();
        }
    }
}
