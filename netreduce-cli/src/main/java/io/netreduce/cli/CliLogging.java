package io.netreduce.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import org.slf4j.LoggerFactory;

/**
 * Log levels of the netreduce command. Logs go to stderr (see logback.xml); by default only
 * warnings show, {@code --verbose} shows debug output of every module, and long-running
 * servers such as {@code netreduce switch} raise their own package to INFO so that users
 * see rings come and go.
 */
public final class CliLogging {
    private static volatile boolean verbose;

    private CliLogging() {
    }

    public static boolean verbose() {
        return verbose;
    }

    public static void setVerbose(boolean on) {
        verbose = on;
        if (on) {
            root().setLevel(Level.DEBUG);
        }
    }

    /** Shows INFO logs of {@code packageName} unless --verbose already shows more. */
    public static void showInfo(String packageName) {
        Logger logger = (Logger) LoggerFactory.getLogger(packageName);
        if (!verbose) {
            logger.setLevel(Level.INFO);
        }
    }

    private static Logger root() {
        return (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    }
}
