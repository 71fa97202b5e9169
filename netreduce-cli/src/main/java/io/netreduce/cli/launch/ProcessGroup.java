package io.netreduce.cli.launch;

import io.netreduce.cli.CliException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The child processes one command started. Closing the group (normally, on failure, or
 * from its shutdown hook on Ctrl-C) stops every child that is still running, so the
 * command leaves nothing behind. Waits are bounded and fail fast: when one child fails,
 * the others are stopped and the error names the child and its last stderr line.
 */
public final class ProcessGroup implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProcessGroup.class);
    private static final long POLL_MILLIS = 20;

    private final List<ManagedProcess> processes = new ArrayList<>();
    private final Thread shutdownHook;
    private boolean closed;

    public ProcessGroup() {
        shutdownHook = new Thread(this::destroyAll, "netreduce-cleanup");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /** Starts a child in this group; see {@link ManagedProcess#start}. */
    public synchronized ManagedProcess start(JvmCommand command, Consumer<String> stdoutLines, PrintStream stderr) {
        if (closed) {
            throw new IllegalStateException("process group is closed");
        }
        ManagedProcess p = ManagedProcess.start(command, stdoutLines, stderr);
        processes.add(p);
        return p;
    }

    public synchronized List<ManagedProcess> processes() {
        return List.copyOf(processes);
    }

    /**
     * Waits until every child has exited with code 0, at most {@code timeout}. Throws a
     * {@link CliException} naming the first child that failed or the ones still running.
     */
    public void awaitSuccess(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<ManagedProcess> all = processes();
        while (true) {
            boolean allDone = true;
            for (ManagedProcess p : all) {
                Optional<Integer> code = p.exitCode();
                if (code.isEmpty()) {
                    allDone = false;
                } else if (code.get() != 0) {
                    p.drainOutput();
                    String why = p.lastErrorLine()
                            // A netreduce child already printed one line; quote its message only.
                            .replace(" (--verbose shows details)", "").replaceFirst("^netreduce [a-z]+: ", "");
                    throw new CliException(p.name() + " exited with code " + code.get()
                            + (why.isBlank() ? "" : ": " + why.strip()));
                }
            }
            if (allDone) {
                for (ManagedProcess p : all) {
                    p.drainOutput();
                }
                return;
            }
            if (System.nanoTime() > deadline) {
                List<String> running = all.stream().filter(ManagedProcess::isAlive).map(ManagedProcess::name).toList();
                throw new CliException(running + " did not finish within " + timeout.toSeconds() + " s");
            }
            TimeUnit.MILLISECONDS.sleep(POLL_MILLIS);
        }
    }

    /** Stops every child still running; bounded by the children's grace periods. */
    public void destroyAll() {
        List<ManagedProcess> alive = processes().stream().filter(ManagedProcess::isAlive).toList();
        if (!alive.isEmpty()) {
            LOG.debug("stopping {}", alive.stream().map(ManagedProcess::name).toList());
        }
        // Signal all first, then wait, so that N children take one grace period, not N.
        alive.forEach(p -> {
            p.handle().descendants().forEach(ProcessHandle::destroy);
            p.handle().destroy();
        });
        alive.forEach(ManagedProcess::destroy);
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        destroyAll();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // Already running hooks (Ctrl-C): ours is among them, nothing to remove.
        }
    }
}
