package io.netreduce.wire.roce;

/**
 * How RoCEv2 packets are addressed over UDP, the rules every party (soft provider, switch,
 * capture writer) shares: the IANA destination port, and the source port a queue pair sends
 * from. RoCEv2 lets the source port carry flow entropy (IBTA Annex A17); here it is a pure
 * function of the sending QPN, {@code 0xC000 | (qpn & 0x3FFF)}, so a switch or a receiver
 * can rebuild the canonical IPv4/UDP header of the ICRC (docs/protocol.md) from the
 * connection's QPN alone, whatever port the kernel would have picked.
 */
public final class RoceAddressing {
    /** The RoCEv2 UDP destination port (IANA "roce"). */
    public static final int UDP_PORT = 4791;
    /** First port of the entropy source-port range; the QPN's low bits fill the rest. */
    public static final int SOURCE_PORT_BASE = 0xC000;
    private static final int SOURCE_PORT_QPN_MASK = 0x3FFF;

    private RoceAddressing() {
    }

    /** The UDP source port of every packet queue pair {@code qpn} sends. */
    public static int sourcePort(int qpn) {
        return SOURCE_PORT_BASE | (qpn & SOURCE_PORT_QPN_MASK);
    }
}
