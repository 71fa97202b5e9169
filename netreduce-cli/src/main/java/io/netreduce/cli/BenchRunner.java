package io.netreduce.cli;

/** Runs the benchmark; filled in against netreduce-collectives. */
final class BenchRunner {
    private final BenchCommand options;

    BenchRunner(BenchCommand options) {
        this.options = options;
    }

    int run() {
        throw new CliException("bench needs netreduce-collectives, which is not part of this build yet");
    }
}
