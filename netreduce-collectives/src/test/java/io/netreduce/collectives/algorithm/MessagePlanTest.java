package io.netreduce.collectives.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class MessagePlanTest {

    @Test
    void cutsIntoFullMessagesAndAShorterLast() {
        MessagePlan plan = new MessagePlan(10, 16);
        assertEquals(3, plan.messageCount());
        assertEquals(0, plan.elementOffset(0));
        assertEquals(4, plan.elementCount(0));
        assertEquals(8, plan.elementOffset(2));
        assertEquals(2, plan.elementCount(2));
        assertEquals(8, plan.payloadLength(2));
    }

    @Test
    void boundaryCases() {
        assertEquals(0, new MessagePlan(0, 4096).messageCount());
        assertEquals(1, new MessagePlan(1, 4096).messageCount());
        assertEquals(1, new MessagePlan(1024, 4096).messageCount());
        assertEquals(2, new MessagePlan(1025, 4096).messageCount());
        assertEquals(1, new MessagePlan(1025, 4096).elementCount(1));
        assertEquals(1024, new MessagePlan(1023 + 1024, 4096).elementCount(0));
        assertEquals(1023, new MessagePlan(1023 + 1024, 4096).elementCount(1));
        assertEquals(16384, new MessagePlan(1 << 24, 4096).messageCount());
    }

    @Test
    void rejectsBadPayloadLengths() {
        assertThrows(IllegalArgumentException.class, () -> new MessagePlan(4, 0));
        assertThrows(IllegalArgumentException.class, () -> new MessagePlan(4, 6));
        assertThrows(IllegalArgumentException.class, () -> new MessagePlan(-1, 4));
    }
}
