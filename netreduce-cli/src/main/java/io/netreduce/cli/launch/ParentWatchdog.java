package io.netreduce.cli.launch;

import java.io.IOException;
import java.io.InputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs in a child started by {@link ManagedProcess}: the parent keeps our stdin open and
 * never writes to it, so end-of-file means the parent is gone (even if it was killed with
 * SIGKILL and could not clean up). The child then exits at once instead of lingering.
 */
public final class ParentWatchdog {
    private static final Logger LOG = LoggerFactory.getLogger(ParentWatchdog.class);
    /** Exit code of a child whose parent vanished. */
    public static final int ORPHANED = 125;

    private ParentWatchdog() {
    }

    /** Starts the watchdog if this process was launched by a netreduce parent. */
    public static void startIfChild() {
        if (System.getenv(JvmCommand.ENV_EXIT_WITH_PARENT) == null) {
            return;
        }
        Thread t = new Thread(() -> {
            InputStream in = System.in;
            try {
                while (in.read() >= 0) {
                    // Nothing is ever written; ignore stray bytes.
                }
            } catch (IOException e) {
                LOG.debug("stdin closed: {}", e.getMessage());
            }
            LOG.warn("parent process is gone; exiting");
            Runtime.getRuntime().halt(ORPHANED);
        }, "parent-watchdog");
        t.setDaemon(true);
        t.start();
    }
}
