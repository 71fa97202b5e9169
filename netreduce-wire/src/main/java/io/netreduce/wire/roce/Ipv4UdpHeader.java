package io.netreduce.wire.roce;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.ByteBuffer;

/**
 * The canonical IPv4 + UDP header (28 bytes) that a RoCEv2 datagram would carry between
 * two endpoints: IP ID 0, DF set, TTL 64, UDP checksum 0. User space cannot see the IP ID
 * the kernel picks, so the ICRC is computed over this header instead (docs/protocol.md, "ICRC: the canonical header convention");
 * the pcap writer emits the same header so captures verify independently.
 */
public final class Ipv4UdpHeader {
    public static final int IPV4_LENGTH = 20;
    public static final int UDP_LENGTH = 8;
    public static final int LENGTH = IPV4_LENGTH + UDP_LENGTH;

    public static final int VERSION_IHL_OFFSET = 0;
    public static final int TOS_OFFSET = 1;
    public static final int TOTAL_LENGTH_OFFSET = 2;
    public static final int IDENTIFICATION_OFFSET = 4;
    public static final int FLAGS_FRAGMENT_OFFSET = 6;
    public static final int TTL_OFFSET = 8;
    public static final int PROTOCOL_OFFSET = 9;
    public static final int CHECKSUM_OFFSET = 10;
    public static final int SRC_ADDRESS_OFFSET = 12;
    public static final int DST_ADDRESS_OFFSET = 16;
    public static final int UDP_SRC_PORT_OFFSET = 20;
    public static final int UDP_DST_PORT_OFFSET = 22;
    public static final int UDP_LENGTH_OFFSET = 24;
    public static final int UDP_CHECKSUM_OFFSET = 26;

    public static final int VERSION_IHL = 0x45;
    public static final int FLAG_DONT_FRAGMENT = 0x4000;
    public static final int DEFAULT_TTL = 64;
    public static final int PROTOCOL_UDP = 17;

    private Ipv4UdpHeader() {
    }

    /**
     * Writes the canonical header at {@code offset} for a UDP payload (BTH .. ICRC) of
     * {@code udpPayloadLength} bytes. Addresses are IPv4 addresses as big-endian ints.
     */
    public static void write(ByteBuffer b, int offset, int srcIp, int dstIp, int srcPort, int dstPort,
                             int udpPayloadLength) {
        writeUnchecked(b, offset, srcIp, dstIp, srcPort, dstPort, udpPayloadLength);
        b.putShort(offset + CHECKSUM_OFFSET, (short) ipChecksum(b, offset));
    }

    /**
     * {@link #write} with the IPv4 checksum left 0: for the ICRC, which masks the checksum
     * to ones (IBTA Annex A17), so computing it per datagram would be wasted.
     */
    public static void writeUnchecked(ByteBuffer b, int offset, int srcIp, int dstIp, int srcPort, int dstPort,
                                      int udpPayloadLength) {
        int udpLen = UDP_LENGTH + udpPayloadLength;
        b.put(offset + VERSION_IHL_OFFSET, (byte) VERSION_IHL);
        b.put(offset + TOS_OFFSET, (byte) 0);
        b.putShort(offset + TOTAL_LENGTH_OFFSET, (short) (IPV4_LENGTH + udpLen));
        b.putShort(offset + IDENTIFICATION_OFFSET, (short) 0);
        b.putShort(offset + FLAGS_FRAGMENT_OFFSET, (short) FLAG_DONT_FRAGMENT);
        b.put(offset + TTL_OFFSET, (byte) DEFAULT_TTL);
        b.put(offset + PROTOCOL_OFFSET, (byte) PROTOCOL_UDP);
        b.putShort(offset + CHECKSUM_OFFSET, (short) 0);
        b.putInt(offset + SRC_ADDRESS_OFFSET, srcIp);
        b.putInt(offset + DST_ADDRESS_OFFSET, dstIp);
        b.putShort(offset + UDP_SRC_PORT_OFFSET, (short) srcPort);
        b.putShort(offset + UDP_DST_PORT_OFFSET, (short) dstPort);
        b.putShort(offset + UDP_LENGTH_OFFSET, (short) udpLen);
        b.putShort(offset + UDP_CHECKSUM_OFFSET, (short) 0);
    }

    /** RFC 791 header checksum over the 20 bytes at {@code offset} (checksum field included as is). */
    public static int ipChecksum(ByteBuffer b, int offset) {
        int sum = 0;
        for (int i = 0; i < IPV4_LENGTH; i += 2) {
            sum += b.getShort(offset + i) & 0xFFFF;
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return ~sum & 0xFFFF;
    }

    /** An IPv4 address as a big-endian int; other address families are refused. */
    public static int toInt(InetAddress address) {
        if (!(address instanceof Inet4Address)) {
            throw new IllegalArgumentException("RoCEv2 framing here supports IPv4 only, not " + address);
        }
        byte[] a = address.getAddress();
        return (a[0] & 0xFF) << 24 | (a[1] & 0xFF) << 16 | (a[2] & 0xFF) << 8 | (a[3] & 0xFF);
    }
}
