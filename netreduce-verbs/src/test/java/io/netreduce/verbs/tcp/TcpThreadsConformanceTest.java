package io.netreduce.verbs.tcp;

/** The conformance suite with threaded progress: a reader and a writer thread per queue pair. */
class TcpThreadsConformanceTest extends TcpConformanceTest {
    @Override
    TcpProgress progress() {
        return TcpProgress.THREADS;
    }
}
