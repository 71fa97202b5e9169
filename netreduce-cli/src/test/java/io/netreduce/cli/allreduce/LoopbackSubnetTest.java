package io.netreduce.cli.allreduce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The loopback /24s that local runs give each group's devices. */
class LoopbackSubnetTest {
    @Test
    void prefixRoundTripsAndNamesRankAddresses() {
        LoopbackSubnet s = LoopbackSubnet.parse("127.130.7");
        assertEquals("127.130.7", s.prefix());
        assertEquals("127.130.7.2", s.rank(0));
        assertEquals("127.130.7.100", s.switchHost());
        assertEquals(s.prefix(), LoopbackSubnet.parse(s.prefix()).prefix());
    }

    @Test
    void refusesWhatIsNotALoopbackSlash24() {
        for (String bad : List.of("10.1.2", "127.1", "127.1.2.3", "127.256.0", "127.a.b")) {
            assertThrows(IllegalArgumentException.class, () -> LoopbackSubnet.parse(bad), bad);
        }
    }

    @Test
    void groupsGetSubnetsOfTheirOwn() {
        List<LoopbackSubnet> taken = new ArrayList<>(List.of(LoopbackSubnet.pick()));
        for (int i = 0; i < 50; i++) {
            LoopbackSubnet next = LoopbackSubnet.pickOther(taken);
            for (LoopbackSubnet t : taken) {
                assertNotEquals(t.prefix(), next.prefix());
            }
            taken.add(next);
        }
    }
}
