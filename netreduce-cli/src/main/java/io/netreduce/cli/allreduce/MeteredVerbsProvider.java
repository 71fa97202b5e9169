package io.netreduce.cli.allreduce;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Counter;
import io.netreduce.verbs.Counters;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.FaultPlan;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.VerbsProvider;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A verbs provider that stands in front of a real one inside a demo or bench worker, so
 * that the CLI can (a) inject seeded packet loss on the worker's device and (b) read what
 * the device put on the wire, without the collectives layer having to expose either.
 * It opens the real provider's device with the configured egress faults and keeps every
 * queue pair created on it, whose own counters (wire bytes including headers, ICRC, ACKs
 * and retransmissions) it sums. Memory regions, queue pairs and completion queues are the
 * real provider's objects, so the data path is untouched.
 *
 * <p>Registered as "metered"; a worker calls {@link #configure} before opening its
 * communicator with that transport name. One worker per process, hence static state.
 */
public final class MeteredVerbsProvider implements VerbsProvider {
    public static final String NAME = "metered";

    private static volatile String delegateName;
    private static volatile FaultPlan egressFaults = FaultPlan.NONE;
    private static final List<QueuePair> QUEUE_PAIRS = new CopyOnWriteArrayList<>();

    /** Which provider to use underneath and what loss to inject on its egress. */
    public static void configure(String delegate, FaultPlan faults) {
        delegateName = delegate;
        egressFaults = faults;
    }

    /** Every counter ({@link Counter#ordinal()} order) summed over every queue pair opened through this provider so far. */
    public static long[] totals() {
        long[] sums = new long[Counter.values().length];
        for (QueuePair qp : QUEUE_PAIRS) {
            for (Counter c : Counter.values()) {
                sums[c.ordinal()] += qp.counters().get(c);
            }
        }
        return sums;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "the netreduce command's meter: another provider with injected loss and summed wire counters";
    }

    /**
     * The wrapped transport's, under its own name: whatever an algorithm may ask of the
     * transport, the meter adds nothing to it and takes nothing away.
     */
    @Override
    public TransportCapabilities capabilities() {
        String delegate = delegateName;
        return delegate == null ? TransportCapabilities.of(NAME) : Verbs.provider(delegate).capabilities();
    }

    @Override
    public String unavailableReason() {
        return delegateName == null ? "only the netreduce command's workers use it" : null;
    }

    @Override
    public Set<String> deviceProperties() {
        return delegateName == null ? Set.of() : Verbs.provider(delegateName).deviceProperties();
    }

    @Override
    public Device open(DeviceOptions options) {
        return new MeteredDevice(Verbs.open(delegateName, DeviceOptions.Builder.from(options).egressFaults(egressFaults)
                .build()));
    }

    private static final class MeteredDevice implements Device {
        private final Device real;

        MeteredDevice(Device real) {
            this.real = real;
        }

        @Override
        public String providerName() {
            return real.providerName();
        }

        @Override
        public DeviceOptions options() {
            return real.options();
        }

        @Override
        public ProtectionDomain allocateProtectionDomain() {
            return new MeteredProtectionDomain(real.allocateProtectionDomain());
        }

        @Override
        public CompletionQueue createCompletionQueue(int capacity) {
            return real.createCompletionQueue(capacity);
        }

        @Override
        public TransportCapabilities capabilities() {
            return real.capabilities();
        }

        @Override
        public Counters counters() {
            return real.counters();
        }

        @Override
        public void close() {
            real.close();
        }
    }

    private static final class MeteredProtectionDomain implements ProtectionDomain {
        private final ProtectionDomain real;

        MeteredProtectionDomain(ProtectionDomain real) {
            this.real = real;
        }

        @Override
        public MemoryRegion register(ByteBuffer buffer, Set<Access> access) {
            return real.register(buffer, access);
        }

        @Override
        public QueuePair createQueuePair(QpAttributes attributes) {
            QueuePair qp = real.createQueuePair(attributes);
            QUEUE_PAIRS.add(qp);
            return qp;
        }

        @Override
        public void close() {
            real.close();
        }
    }
}
