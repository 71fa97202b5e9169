package io.netreduce.collectives.algorithm;

/**
 * How a tensor of 32-bit elements is cut into messages: every message carries
 * {@code payloadBytes} of tensor except the last, which carries the rest. All ranks of a
 * ring use the same payload length, so message {@code i} covers the same element range on
 * every rank (docs/protocol.md, "The INA header"). Immutable and allocation-free to query.
 */
public final class MessagePlan {
    /** Bytes per element (fp32 and int32 alike). */
    public static final int ELEMENT_BYTES = 4;
    private final int elements;
    private final int messageElements;
    private final int messageCount;

    public MessagePlan(int elements, int payloadBytes) {
        if (elements < 0) {
            throw new IllegalArgumentException("element count must not be negative: " + elements);
        }
        checkPayloadBytes(payloadBytes);
        this.elements = elements;
        this.messageElements = payloadBytes / ELEMENT_BYTES;
        this.messageCount = messageCount(elements, payloadBytes);
    }

    /** Throws unless {@code payloadBytes} is a positive multiple of {@link #ELEMENT_BYTES}. */
    public static int checkPayloadBytes(int payloadBytes) {
        if (payloadBytes <= 0 || payloadBytes % ELEMENT_BYTES != 0) {
            throw new IllegalArgumentException(
                    "message payload length must be a positive multiple of 4 bytes: " + payloadBytes);
        }
        return payloadBytes;
    }

    /** Messages needed for {@code elements} elements at {@code payloadBytes} per message. */
    public static int messageCount(int elements, int payloadBytes) {
        int per = payloadBytes / ELEMENT_BYTES;
        return (int) (((long) elements + per - 1) / per);
    }

    public int elements() {
        return elements;
    }

    public int messageCount() {
        return messageCount;
    }

    /** Index of the first element of message {@code i}. */
    public int elementOffset(int i) {
        return i * messageElements;
    }

    /** Elements in message {@code i}: the full length except for the last message. */
    public int elementCount(int i) {
        return Math.min(messageElements, elements - i * messageElements);
    }

    public int payloadLength(int i) {
        return elementCount(i) * ELEMENT_BYTES;
    }

    @Override
    public String toString() {
        return "MessagePlan{" + elements + " elements in " + messageCount + " messages of "
                + messageElements * ELEMENT_BYTES + " bytes}";
    }
}
