package io.netreduce.verbs.soft;

/**
 * How a device's requesters send (from its {@link SoftProperties}).
 *
 * @param maxOutstanding most request PSNs a queue pair keeps unacknowledged
 * @param ackEvery       request packets without AckReq before one is forced
 * @param tailProbeNanos the least quiet time after which the newest unacknowledged packet is
 *                       sent again to draw an ACK or NAK (0: never; the ACK timeout alone)
 */
record SendSettings(int maxOutstanding, int ackEvery, long tailProbeNanos) {
}
