package io.netreduce.cli;

/** Runs the demo; filled in against netreduce-collectives. */
final class DemoRunner {
    private final DemoCommand options;

    DemoRunner(DemoCommand options) {
        this.options = options;
    }

    int run() {
        throw new CliException("demo needs netreduce-collectives, which is not part of this build yet");
    }
}
