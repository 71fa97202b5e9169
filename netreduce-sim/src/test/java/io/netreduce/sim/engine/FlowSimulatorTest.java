package io.netreduce.sim.engine;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FlowSimulatorTest {

    private static final double EPS = 1e-9;

    /**
     * Hand-computed max-min case. Links A (10 B/s) and B (4 B/s); f1 crosses A, f2 crosses A and B,
     * f3 crosses B. B is the first bottleneck: f2 = f3 = 2; A's remaining 8 go to f1. At t = 10 f2
     * (20 B) is done; f1 has 20 B left, f3 has 20 B left. Rates are recomputed: f1 = 10, f3 = 4,
     * so f1 finishes at 12 and f3 at 15.
     */
    @Test
    void maxMinSharingMatchesHandComputedCase() {
        FlowSimulator sim = new FlowSimulator();
        Link a = sim.link("A", 10, 0);
        Link b = sim.link("B", 4, 0);
        Transfer f1 = sim.transfer("f1", 100, 1, Route.of(a));
        Transfer f2 = sim.transfer("f2", 20, 1, Route.of(a, b));
        Transfer f3 = sim.transfer("f3", 40, 1, Route.of(b));
        SimulationResult r = sim.run();
        assertEquals(10.0, f2.sentTime(), EPS);
        assertEquals(12.0, f1.sentTime(), EPS);
        assertEquals(15.0, f3.sentTime(), EPS);
        assertEquals(15.0, r.makespan(), EPS);
        assertEquals(3, r.flows());
    }

    /** A flow arriving later takes its fair share from the running one, which speeds up again when it leaves. */
    @Test
    void ratesAreRecomputedWhenAFlowArrives() {
        FlowSimulator sim = new FlowSimulator();
        Link l = sim.link("L", 8, 0);
        Link gate = sim.link("gate", 1, 0);
        Transfer first = sim.transfer("first", 48, 1, Route.of(l));
        Transfer opener = sim.transfer("opener", 2, 1, Route.of(gate)); // done at t = 2
        Transfer second = sim.transfer("second", 12, 1, Route.of(l)).after(opener, Transfer.Milestone.SENT);
        sim.run();
        // 0..2: first alone at 8 -> 16 B sent, 32 left. From 2: 4 B/s each; second (12 B) done at 5.
        // first has 32 - 12 = 20 left at 5, alone again at 8 B/s: done at 7.5.
        assertEquals(5.0, second.sentTime(), EPS);
        assertEquals(7.5, first.sentTime(), EPS);
    }

    /** k flows grouped with weight k on a shared link time exactly as k separate flows. */
    @Test
    void weightedGroupEqualsExpandedFlows() {
        FlowSimulator grouped = new FlowSimulator();
        Link shared = grouped.link("shared", 9, 1e-3);
        Link other = grouped.link("other", 100, 0);
        Transfer g = grouped.transfer("g", 30, 3, Route.builder().via(shared, 3).build());
        Transfer x = grouped.transfer("x", 60, 1, Route.of(shared, other));
        grouped.run();

        FlowSimulator expanded = new FlowSimulator();
        Link shared2 = expanded.link("shared", 9, 1e-3);
        Link other2 = expanded.link("other", 100, 0);
        Transfer[] members = new Transfer[3];
        for (int i = 0; i < 3; i++) {
            members[i] = expanded.transfer("g" + i, 30, 1, Route.of(shared2));
        }
        Transfer x2 = expanded.transfer("x", 60, 1, Route.of(shared2, other2));
        expanded.run();

        for (Transfer m : members) {
            assertEquals(m.deliveredTime(), g.deliveredTime(), EPS);
        }
        assertEquals(x2.deliveredTime(), x.deliveredTime(), EPS);
        // 4 flows at 2.25 B/s: the group's 30 B take 13.333 s; then x alone at 9 B/s.
        assertEquals(30 / 2.25 + 1e-3, g.deliveredTime(), EPS);
        assertEquals(30 / 2.25 + 30 / 9.0 + 1e-3, x.deliveredTime(), EPS);
    }

    /** Latency: delivery is one route latency after the last byte is sent; SENT and DELIVERED dependencies differ by it. */
    @Test
    void latencySeparatesSentFromDelivered() {
        FlowSimulator sim = new FlowSimulator();
        Link l1 = sim.link("l1", 100, 0.5);
        Link l2 = sim.link("l2", 100, 0.25);
        Transfer a = sim.transfer("a", 100, 1, Route.of(l1, l2));
        Transfer afterSent = sim.transfer("afterSent", 100, 1, Route.of(l1)).after(a, Transfer.Milestone.SENT);
        Transfer afterDelivered = sim.transfer("afterDelivered", 100, 1, Route.of(l2)).after(a, Transfer.Milestone.DELIVERED);
        sim.run();
        assertEquals(1.0, a.sentTime(), EPS);
        assertEquals(1.75, a.deliveredTime(), EPS);
        assertEquals(1.0, afterSent.startTime(), EPS);
        assertEquals(2.5, afterSent.deliveredTime(), EPS);
        assertEquals(1.75, afterDelivered.startTime(), EPS);
        assertEquals(3.0, afterDelivered.deliveredTime(), EPS);
    }

    @Test
    void unlimitedLinksAndEmptyTransfersPayOnlyLatency() {
        FlowSimulator sim = new FlowSimulator();
        Link free = sim.link("free", Double.POSITIVE_INFINITY, 2.0);
        Transfer big = sim.transfer("big", 1e12, 1, Route.of(free));
        Transfer empty = sim.transfer("empty", 0, 1, Route.of(free)).after(big, Transfer.Milestone.DELIVERED);
        SimulationResult r = sim.run();
        assertEquals(2.0, big.deliveredTime(), EPS);
        assertEquals(4.0, empty.deliveredTime(), EPS);
        assertEquals(4.0, r.makespan(), EPS);
    }

    @Test
    void dependencyCycleIsReportedNotHung() {
        FlowSimulator sim = new FlowSimulator();
        Link l = sim.link("l", 1, 0);
        Transfer a = sim.transfer("a", 1, 1, Route.of(l));
        Transfer b = sim.transfer("b", 1, 1, Route.of(l)).after(a, Transfer.Milestone.DELIVERED);
        a.after(b, Transfer.Milestone.DELIVERED);
        IllegalStateException e = assertThrows(IllegalStateException.class, sim::run);
        assertTrue(e.getMessage().contains("never completed"), e.getMessage());
    }

    @Test
    void badInputIsRejectedWithItsName() {
        FlowSimulator sim = new FlowSimulator();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> sim.link("nic", 0, 0));
        assertTrue(e.getMessage().contains("nic"), e.getMessage());
        Link l = sim.link("l", 1, 0);
        e = assertThrows(IllegalArgumentException.class, () -> sim.transfer("neg", -1, 1, Route.of(l)));
        assertTrue(e.getMessage().contains("neg"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Route.builder().via(l, 1).via(l, 1));
        assertTrue(e.getMessage().contains("twice"), e.getMessage());
    }
}
