package io.netreduce.verbs.tcp;

/** The ACK-timer tests with polled progress: the test's polls (and the device's fallback while it sleeps) drive the sockets. */
class TcpAckTimerPolledTest extends TcpAckTimerTest {
    @Override
    TcpProgress progress() {
        return TcpProgress.POLL;
    }
}
