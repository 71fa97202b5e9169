package io.netreduce.verbs.support;

/**
 * How long a blocking poll of a software completion queue busy-waits before it sleeps, and
 * how: a completion that arrives within the spin is seen without a wake-up (tens of µs on a
 * VM), one that does not costs the spin's CPU. So the spin adapts: the whole configured
 * time again after a wait that the spin might have caught (up to twice the spin, since a
 * wait that ended in a sleep includes the wake-up), halved after each longer one, down to
 * {@link #MIN_SPIN_NANOS}. Long waits mean the peer computes or has no core, and spinning
 * then only takes the core from whoever the wait is for. Where the host has more busy
 * threads than cores, each turn of the spin yields the core, as Open MPI's progress loop
 * does when oversubscribed.
 *
 * <p>Its state belongs to the one thread that polls the queue (as a completion queue's
 * poller is one thread at a time); a second poller at worst spins a little longer or shorter.
 */
public final class AdaptiveSpin {
    /** The shortest adaptive spin: about a system call's worth of polling. */
    public static final long MIN_SPIN_NANOS = 2_000;

    private final long spinNanos;
    private final boolean yieldWhileSpinning;
    private long budget;

    public AdaptiveSpin(long spinNanos, boolean yieldWhileSpinning) {
        this.spinNanos = Math.max(0, spinNanos);
        this.yieldWhileSpinning = yieldWhileSpinning;
        this.budget = this.spinNanos;
    }

    /** The longest spin (the configured one). */
    public long spinNanos() {
        return spinNanos;
    }

    /** True if each turn of the spin yields the core. */
    public boolean yieldsWhileSpinning() {
        return yieldWhileSpinning;
    }

    /** The spin the next blocking poll starts with. */
    public long budgetNanos() {
        return budget;
    }

    /** One turn of the spin. */
    public void pause() {
        if (yieldWhileSpinning) {
            Thread.yield();
        } else {
            Thread.onSpinWait();
        }
    }

    /** After a blocking poll that waited {@code waitedNanos} for its completions. */
    public void adapt(long waitedNanos) {
        budget = waitedNanos <= 2 * spinNanos ? spinNanos : Math.max(Math.min(MIN_SPIN_NANOS, spinNanos), budget / 2);
    }
}
