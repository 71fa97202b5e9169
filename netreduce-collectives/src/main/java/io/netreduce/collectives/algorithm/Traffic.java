package io.netreduce.collectives.algorithm;

/**
 * What an algorithm's transport moved so far, and how long the algorithm waited for it:
 * wire bytes and packets (headers, ACKs and retransmissions included), the RNR NAKs
 * received (a message that found no receive posted and was resent after the RNR timer),
 * and the time spent blocked waiting for completions.
 */
public record Traffic(long bytesSent, long bytesReceived, long packetsSent, long packetsReceived,
                      long retransmittedPackets, long rnrNaksReceived, long waitNanos) {
    public static final Traffic NONE = new Traffic(0, 0, 0, 0, 0, 0, 0);
}
