package io.netreduce.cli;

import io.netreduce.cli.allreduce.Progress;

/** The software switch the demo runs in its own process; filled in against netreduce-switch. */
final class DemoSwitch implements AutoCloseable {
    static DemoSwitch start(Progress progress) {
        throw new CliException("the netreduce algorithm needs the software switch, which is not part of this build "
                + "yet; run with --algorithms ring");
    }

    String dataAddress() {
        throw new UnsupportedOperationException();
    }

    String controlUrl() {
        throw new UnsupportedOperationException();
    }

    @Override
    public void close() {
    }
}
