package io.netreduce.cli.allreduce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AlgorithmVariantTest {
    @Test
    void aPlainNameIsItsOwnLabelWithNoSettings() {
        AlgorithmVariant v = AlgorithmVariant.parse("ring");
        assertEquals("ring", v.label());
        assertEquals("ring", v.algorithm());
        assertEquals(Map.of(), v.settings());
    }

    @Test
    void settingsFollowTheNameAndTheLabelIsTheEntryAsWritten() {
        String entry = "netreduce@NETREDUCE_WINDOW=8@NETREDUCE_MESSAGE_BYTES=131072";
        AlgorithmVariant v = AlgorithmVariant.parse(entry);
        assertEquals(entry, v.label());
        assertEquals("netreduce", v.algorithm());
        assertEquals(Map.of("NETREDUCE_WINDOW", "8", "NETREDUCE_MESSAGE_BYTES", "131072"), v.settings());
        assertTrue(AlgorithmVariant.anyRuns(List.of("ring", entry), "netreduce"));
    }

    @Test
    void aKeyWithADotIsADevicePropertyOfTheTransport() {
        AlgorithmVariant v = AlgorithmVariant.parse("ring@tcp.spinMicros=0@NETREDUCE_RING_WINDOW=8");
        assertEquals("ring", v.algorithm());
        assertEquals(Map.of("NETREDUCE_RING_WINDOW", "8"), v.settings());
        assertEquals(Map.of("tcp.spinMicros", "0"), v.deviceProperties());
        assertThrows(IllegalArgumentException.class, () -> AlgorithmVariant.parse("ring@tcp.spinMicros=0@tcp.spinMicros=1"));
    }

    @Test
    void refusesASettingTwiceOneWithoutAValueAndOneOutsideTheList() {
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
                () -> AlgorithmVariant.parse("ring@NETREDUCE_RING_WINDOW=2@NETREDUCE_RING_WINDOW=8"));
        assertTrue(twice.getMessage().contains("twice"), twice.getMessage());
        for (String bad : List.of("ring@NETREDUCE_RING_WINDOW", "ring@=8", "ring@NETREDUCE_TRANSPORT=tcp", "ring@.x=1")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> AlgorithmVariant.parse(bad));
            assertTrue(e.getMessage().contains(bad), e.getMessage());
        }
    }
}
