package io.netreduce.netswitch.dataplane;

/** {@link SwitchOverUdpTest} on the Netty data plane, the path of machines without the native library. */
class SwitchOverNettyUdpTest extends SwitchOverUdpTest {
    @Override
    boolean nativeIo() {
        return false;
    }
}
