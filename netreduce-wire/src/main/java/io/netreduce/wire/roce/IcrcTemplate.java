package io.netreduce.wire.roce;

import io.netreduce.wire.roce.Ipv4UdpHeader;

import io.netreduce.wire.udp.AddressCache;
import io.netreduce.wire.udp.NativeUdp;
import java.nio.ByteBuffer;
import java.util.zip.CRC32;

/**
 * The ICRC of {@link Icrc}, specialised for a datapath that knows each connection's
 * canonical header in advance: the 8 bytes of 0xFF and the masked IPv4/UDP header are built
 * once per route ({@link #template}); per packet only the two length fields and the BTH are
 * patched in before the CRC streams the rest straight from the packet buffer. Equivalent to
 * {@link Icrc#compute} (a test checks it on random packets); not thread-safe.
 *
 * <p>Where the native library loads and the packet lies in direct memory, the template and
 * the rest go to {@link NativeUdp#crc32} in one call (and a result's template and headers
 * in one): the JDK's CRC pays about 30 ns per call before its first byte, a quarter of a
 * 1 KiB payload's CRC. The switch's engine alone: 0.90x its CPU per 1 KiB packet, 0.92x per
 * 4 KiB (docs/benchmarks.md, software switch).
 */
public final class IcrcTemplate {
    public static final int TEMPLATE_LENGTH = 8 + Ipv4UdpHeader.LENGTH + Bth.LENGTH;
    private static final int IP = 8;
    private static final int BTH = IP + Ipv4UdpHeader.LENGTH;

    private static final boolean NATIVE = NativeUdp.available();

    private final CRC32 crc = new CRC32();
    /** The patched template, then a result's other headers (an ImmDt and the INA header): direct, for {@link NativeUdp#crc32}. */
    private final ByteBuffer scratch = ByteBuffer.allocateDirect(TEMPLATE_LENGTH + Icrc.HEADER_ROOM);
    private final long scratchAddress = NATIVE ? NativeUdp.address(scratch) : 0;
    private final Crc32Append append = new Crc32Append();
    private final AddressCache addresses = new AddressCache();
    /**
     * The template whose bytes before the BTH the scratch holds: a queue pair's packets, and
     * a run of results to one connection, use one template after another, so those bytes
     * (all but the two lengths, which every patch writes) are copied only when it changes.
     */
    private byte[] loaded;

    /**
     * LRH stand-in plus the masked canonical IPv4/UDP header between two endpoints (lengths
     * 0). Never change a template once made: an instance keeps the last one it used by identity.
     */
    public static byte[] template(int srcIp, int dstIp, int srcPort, int dstPort) {
        ByteBuffer t = ByteBuffer.allocate(TEMPLATE_LENGTH);
        for (int i = 0; i < 8; i++) {
            t.put(i, (byte) 0xFF);
        }
        Ipv4UdpHeader.write(t, IP, srcIp, dstIp, srcPort, dstPort, 0);
        t.put(IP + Ipv4UdpHeader.TOS_OFFSET, (byte) 0xFF);
        t.put(IP + Ipv4UdpHeader.TTL_OFFSET, (byte) 0xFF);
        t.putShort(IP + Ipv4UdpHeader.CHECKSUM_OFFSET, (short) 0xFFFF);
        t.putShort(IP + Ipv4UdpHeader.UDP_CHECKSUM_OFFSET, (short) 0xFFFF);
        return t.array();
    }

    /** ICRC of the datagram (BTH .. ICRC) at [offset, offset + length) of {@code roce}. */
    public int compute(byte[] template, ByteBuffer roce, int offset, int length) {
        patch(template, roce, offset, length);
        int rest = length - Bth.LENGTH - Icrc.LENGTH;
        if (NATIVE && roce.isDirect()) {
            return NativeUdp.crc32(0, scratchAddress, TEMPLATE_LENGTH,
                    addresses.of(roce) + Icrc.inBounds(roce, offset + Bth.LENGTH, rest), rest);
        }
        crc.reset();
        Icrc.update(crc, scratch, 0, TEMPLATE_LENGTH);
        Icrc.update(crc, roce, offset + Bth.LENGTH, rest);
        return (int) crc.getValue();
    }

    /**
     * ICRC of a datagram in two pieces, as a socket gathers it: its {@code headerLength} bytes
     * of headers (BTH first) at {@code head[headOffset..]}, then a payload of {@code
     * payloadLength} bytes (a multiple of 4: no pad) whose CRC-32 alone is {@code payloadCrc}
     * ({@link #payloadCrc}), then the ICRC. Only the headers are read and the payload's CRC
     * is appended ({@link Crc32Append}): a datagram sent to several connections with one
     * payload costs one pass over the payload, not one per connection. The same value as
     * {@link #compute} over the assembled datagram.
     */
    public int computeGathered(byte[] template, ByteBuffer head, int headOffset, int headerLength, int payloadCrc,
                               int payloadLength) {
        patch(template, head, headOffset, headerLength + payloadLength + Icrc.LENGTH);
        int rest = headerLength - Bth.LENGTH;
        int headersCrc;
        if (NATIVE && rest <= Icrc.HEADER_ROOM) {
            // the headers after the template, so that one call covers both
            scratch.put(TEMPLATE_LENGTH, head, headOffset + Bth.LENGTH, rest);
            headersCrc = NativeUdp.crc32(0, scratchAddress, TEMPLATE_LENGTH + rest, 0, 0);
        } else {
            crc.reset();
            Icrc.update(crc, scratch, 0, TEMPLATE_LENGTH);
            Icrc.update(crc, head, headOffset + Bth.LENGTH, rest);
            headersCrc = (int) crc.getValue();
        }
        return append.append(headersCrc, payloadCrc, payloadLength);
    }

    /**
     * ICRC of a datagram in pieces, as a socket gathers it: its {@code headerLength} bytes of
     * headers (BTH first) at {@code head[headOffset..]}, then the payload at {@code
     * payload[payloadOffset, +payloadLength)}, then {@code pad} zero bytes and the ICRC; in
     * one native call where the payload lies in direct memory. The same value as {@link
     * Icrc#computeGathered} with this template's endpoints.
     */
    public int computeGathered(byte[] template, ByteBuffer head, int headOffset, int headerLength, ByteBuffer payload,
                               int payloadOffset, int payloadLength, int pad) {
        patch(template, head, headOffset, headerLength + payloadLength + pad + Icrc.LENGTH);
        int rest = headerLength - Bth.LENGTH;
        if (NATIVE && pad == 0 && rest <= Icrc.HEADER_ROOM && payload.isDirect()) {
            scratch.put(TEMPLATE_LENGTH, head, headOffset + Bth.LENGTH, rest);
            return NativeUdp.crc32(0, scratchAddress, TEMPLATE_LENGTH + rest,
                    addresses.of(payload) + Icrc.inBounds(payload, payloadOffset, payloadLength), payloadLength);
        }
        crc.reset();
        Icrc.update(crc, scratch, 0, TEMPLATE_LENGTH);
        Icrc.update(crc, head, headOffset + Bth.LENGTH, rest);
        Icrc.update(crc, payload, payloadOffset, payloadLength);
        for (int i = 0; i < pad; i++) {
            crc.update(0);
        }
        return (int) crc.getValue();
    }

    /** The CRC-32 of {@code length} payload bytes at {@code offset} of {@code payload}, for {@link #computeGathered}. */
    public int payloadCrc(ByteBuffer payload, int offset, int length) {
        if (NATIVE && payload.isDirect()) {
            return NativeUdp.crc32(0, addresses.of(payload) + Icrc.inBounds(payload, offset, length), length, 0, 0);
        }
        crc.reset();
        Icrc.update(crc, payload, offset, length);
        return (int) crc.getValue();
    }

    /** Writes the template with the datagram's lengths and its BTH (at {@code offset} of {@code roce}) masked in to the scratch. */
    private void patch(byte[] template, ByteBuffer roce, int offset, int length) {
        ByteBuffer h = scratch;
        if (template != loaded) {
            h.put(0, template, 0, BTH);
            loaded = template;
        }
        int udpLength = Ipv4UdpHeader.UDP_LENGTH + length;
        h.putShort(IP + Ipv4UdpHeader.TOTAL_LENGTH_OFFSET, (short) (Ipv4UdpHeader.IPV4_LENGTH + udpLength));
        h.putShort(IP + Ipv4UdpHeader.UDP_LENGTH_OFFSET, (short) udpLength);
        h.put(BTH, roce, offset, Bth.LENGTH);
        h.put(BTH + Bth.ECN_OFFSET, (byte) 0xFF);
    }

    public boolean verify(byte[] template, ByteBuffer roce, int offset, int length) {
        return length >= Bth.LENGTH + Icrc.LENGTH
                && compute(template, roce, offset, length) == Icrc.load(roce, offset + length - Icrc.LENGTH);
    }

    public void write(byte[] template, ByteBuffer roce, int offset, int length) {
        Icrc.store(roce, offset + length - Icrc.LENGTH, compute(template, roce, offset, length));
    }
}
