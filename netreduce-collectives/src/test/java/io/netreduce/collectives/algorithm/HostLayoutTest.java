package io.netreduce.collectives.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class HostLayoutTest {

    @Test
    void emulatedHostsAreRunsOfConsecutiveRanks() {
        HostLayout l = HostLayout.emulated(6, 2);
        assertEquals(2, l.hosts());
        assertEquals(3, l.ranksPerHost());
        assertEquals(1, l.host(4));
        assertEquals(1, l.localRank(4));
        assertEquals(5, l.rankAt(1, 2));
        assertEquals("2 hosts × 3 ranks", l.toString());
    }

    @Test
    void identitiesGroupRanksInLauncherOrderWhereItGaveOne() {
        // Open MPI's round-robin placement: ranks 0 and 2 on host a, 1 and 3 on host b.
        HostLayout l = HostLayout.grouped(new String[] {"a", "b", "a", "b"}, new int[] {0, 0, 1, 1}, "test");
        assertEquals(2, l.hosts());
        assertEquals(0, l.host(2));
        assertEquals(1, l.localRank(2));
        assertEquals(3, l.rankAt(1, 1));
        // Local ranks that say the opposite of the rank order win.
        HostLayout swapped = HostLayout.grouped(new String[] {"a", "a"}, new int[] {1, 0}, "test");
        assertEquals(1, swapped.rankAt(0, 0));
        // No launcher order (or a broken one): rank order.
        HostLayout plain = HostLayout.grouped(new String[] {"a", "a", "a"}, new int[] {-1, 0, 0}, "test");
        assertEquals(0, plain.rankAt(0, 0));
        assertEquals(2, plain.localRank(2));
    }

    @Test
    void unevenHostsHaveNoRanksPerHost() {
        HostLayout l = HostLayout.grouped(new String[] {"a", "a", "b"}, new int[] {-1, -1, -1}, "test");
        assertEquals(-1, l.ranksPerHost());
        assertEquals(2, l.localSize(1));
        assertEquals(1, l.localSize(2));
        assertEquals("2 hosts of 2, 1 ranks", l.toString());
        assertEquals(1, HostLayout.separate(3, "test").ranksPerHost());
    }
}
