package io.netreduce.cli;

/** Starts the switch for {@code netreduce switch}; filled in against netreduce-switch's server API. */
final class SwitchRunner {
    private SwitchRunner() {
    }

    static int runUntilInterrupted(SwitchCommand cmd) {
        throw new CliException("the software switch is not part of this build yet");
    }
}
