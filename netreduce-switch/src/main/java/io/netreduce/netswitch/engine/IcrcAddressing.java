package io.netreduce.netswitch.engine;

import io.netreduce.verbs.DeviceOptions;

/**
 * The one rule tying the switch to the hosts' ICRC convention (the soft provider's, see
 * docs/protocol.md): over UDP sockets the real IP header is the kernel's, so every party
 * computes the ICRC over the canonical IPv4/UDP header the datagram would carry between its
 * two queue pairs' hosts, never the switch's address. Source: the sending QP's address and
 * the entropy port {@link #sourcePort} of its QPN (the soft provider also sends from that
 * port); destination: the receiving device's address and port (4791 unless configured
 * otherwise), i.e. where the switch forwards the datagram. {@link Route} applies it.
 */
public final class IcrcAddressing {
    /** The receiving device's port unless a ring registers another. */
    public static final int DESTINATION_PORT = DeviceOptions.ROCE_PORT;

    private IcrcAddressing() {
    }

    /** RoCEv2 entropy source port of a queue pair, in the 0xC000-0xFFFF range. */
    public static int sourcePort(int qpn) {
        return 0xC000 | (qpn & 0x3FFF);
    }
}
