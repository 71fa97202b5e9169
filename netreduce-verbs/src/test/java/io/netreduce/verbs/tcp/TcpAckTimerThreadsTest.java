package io.netreduce.verbs.tcp;

/** The ACK-timer tests with threaded progress: a reader and a writer thread per queue pair. */
class TcpAckTimerThreadsTest extends TcpAckTimerTest {
    @Override
    TcpProgress progress() {
        return TcpProgress.THREADS;
    }
}
