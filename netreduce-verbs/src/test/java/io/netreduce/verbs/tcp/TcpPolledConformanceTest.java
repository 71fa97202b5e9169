package io.netreduce.verbs.tcp;

/** The conformance suite with polled progress: the suite's polls drive the sockets. */
class TcpPolledConformanceTest extends TcpConformanceTest {
    @Override
    TcpProgress progress() {
        return TcpProgress.POLL;
    }
}
