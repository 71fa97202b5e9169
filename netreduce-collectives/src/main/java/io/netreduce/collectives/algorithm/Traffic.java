package io.netreduce.collectives.algorithm;

/**
 * What an algorithm's transport moved so far, and how long the algorithm waited for it:
 * wire bytes and packets (headers, ACKs and retransmissions included) and the time spent
 * blocked waiting for completions.
 */
public record Traffic(long bytesSent, long bytesReceived, long packetsSent, long packetsReceived,
                      long retransmittedPackets, long waitNanos) {
    public static final Traffic NONE = new Traffic(0, 0, 0, 0, 0, 0);
}
