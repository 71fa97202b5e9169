package io.netreduce.cli.allreduce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Reading the switch's data-plane CPU out of its Prometheus text, and the per-call figure from two readings. */
class SwitchCpuTest {
    @Test
    void readsTheDataPlaneCounterAndNothingElse() {
        String metrics = """
                # HELP netreduce_switch_dataplane_cpu_seconds_total CPU time of the data-plane thread
                # TYPE netreduce_switch_dataplane_cpu_seconds_total counter
                netreduce_switch_dataplane_cpu_seconds_total_other 9.0
                netreduce_switch_dataplane_cpu_seconds_total 1.25
                netreduce_switch_packets_in_total 42
                """;
        assertEquals(1_250_000_000L, SwitchCpu.parse(metrics));
        assertEquals(-1, SwitchCpu.parse("netreduce_switch_packets_in_total 42\n"), "absent");
        assertEquals(-1, SwitchCpu.parse("netreduce_switch_dataplane_cpu_seconds_total 0.0\n"),
                "0 is what a switch that cannot tell reports");
    }

    @Test
    void perCallIsUnknownUnlessBothReadingsAre() {
        assertEquals(0.25, SwitchCpu.perCall(1_000_000_000L, 2_000_000_000L, 4), 1e-12);
        assertTrue(Double.isNaN(SwitchCpu.perCall(-1, 2_000_000_000L, 4)));
        assertTrue(Double.isNaN(SwitchCpu.perCall(1_000_000_000L, -1, 4)));
        assertTrue(Double.isNaN(SwitchCpu.perCall(5, 7, 0)));
        assertEquals(-1, SwitchCpu.NONE.nanos(), "NONE reads nothing");
    }
}
