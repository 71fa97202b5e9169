package io.netreduce.verbs.support;

import java.util.concurrent.TimeUnit;

/**
 * When a software provider whose caller drives the protocol (tcp's polled progress, soft's
 * caller progress) drives it on a thread of its own. An RC NIC keeps answering while its
 * application computes, so a device nobody polls must not stall its peers; one that is
 * polled must not wake a thread of its own often, since on a host with few cores each
 * wake-up takes a core from a rank (docs/benchmarks.md, "The fallback's looks").
 */
public final class FallbackProgress {
    /**
     * Nobody polled for this long: the provider's own thread drives. Long against the gaps
     * of an application inside a collective (a poller that stops to add a few received
     * messages must not find that thread competing for its socket), short against the ACK
     * timeout a peer waits for.
     */
    public static final long IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /**
     * The longest the fallback waits between looks at what has nothing to do, or at what an
     * application keeps polling (a provider that knows its queue pairs' ACK timeouts looks
     * at least every quarter of one). Once the polls stop, the fallback takes over at most
     * this late.
     */
    public static final long LONGEST_LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(32);

    private FallbackProgress() {
    }
}
