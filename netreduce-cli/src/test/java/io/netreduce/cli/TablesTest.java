package io.netreduce.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.cli.allreduce.RankResult;
import io.netreduce.cli.allreduce.Results;
import io.netreduce.cli.allreduce.Row;
import io.netreduce.cli.allreduce.Tables;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How ranks' result lines become nccl-tests rows and tables. */
class TablesTest {
    @Test
    void ranksCombineAsNcclTestsDoes() {
        List<Row> complete = new ArrayList<>();
        Results results = new Results(2, complete::add);
        assertTrue(results.accept(RankResult.PREFIX + Json.line(
                new RankResult(0, "ring", 1_000_000, 250_000, true, 5, 1000.0, 0, 1_100_000, 3, 1, 0.0010))));
        assertEquals(0, complete.size(), "a row is complete only when every rank reported");
        assertTrue(results.accept(RankResult.PREFIX + Json.line(
                new RankResult(1, "ring", 1_000_000, 250_000, true, 5, 3000.0, 2, 900_000, 4, 0, 0.0030))));
        assertEquals(1, complete.size());
        Row r = complete.get(0);
        assertEquals(2000.0, r.timeUs(), 1e-9);            // mean over ranks
        assertEquals(0.5, r.algbwGbps(), 1e-12);           // 1e6 B / 2 ms
        assertEquals(0.5 * 2 * (2 - 1) / 2.0, r.busbwGbps(), 1e-12);
        assertEquals(2, r.wrong());                        // summed over ranks
        assertEquals(1_000_000, r.wireBytesPerWorker());   // mean over workers
        assertEquals(7, r.retransmittedPackets());
        assertEquals(1, r.ackTimeouts());
        assertEquals(0.0020, r.cpuSPerCall(), 1e-12);      // mean over ranks
        assertEquals(2.0, r.cpuSPerGb(), 1e-9);            // 2 ms per 10^6 B
        assertTrue(Json.write(r).contains("\"cpu_s_per_call\"") && Json.write(r).contains("\"cpu_s_per_gb\""),
                Json.write(r));
        assertTrue(!results.accept("some other line"));
    }

    @Test
    void benchTableHasBothPlacementsPerRow() {
        Row oop = new Row("ring", 4096, 1024, "float", "sum", false, 20, 100.0, 0.04096, 0.06144, 0, 5000, 0, 0, 1e-4, 24.4);
        Row ip = new Row("ring", 4096, 1024, "float", "sum", true, 20, 80.0, 0.0512, 0.0768, 0, 5000, 0, 0, 8e-5, 19.5);
        String table = Tables.bench(List.of(oop), List.of(ip));
        assertTrue(table.contains("out-of-place") && table.contains("in-place"), table);
        String row = table.lines().filter(l -> !l.startsWith("#")).findFirst().orElseThrow();
        assertTrue(row.matches("\\s+4096\\s+1024\\s+float\\s+sum\\s+-1\\s+100\\.0\\s+0\\.041\\s+0\\.061\\s+24\\.400"
                + "\\s+0\\s+80\\.0\\s+0\\.051\\s+0\\.077\\s+19\\.500\\s+0"), row);
        assertEquals((0.06144 + 0.0768) / 2, Tables.averageBusBandwidth(List.of(oop, ip)), 1e-12);
    }

    @Test
    void againstGivesRatiosPerSizeAndPlacement() {
        Row nr = new Row("netreduce", 4096, 1024, "float", "sum", true, 20, 100.0, 0.04096, 0.06144, 0, 5000, 0, 0,
                1e-4, 24.4).withSwitchCpu(2e-5);
        Row ring = new Row("ring", 4096, 1024, "float", "sum", true, 20, 50.0, 0.08192, 0.12288, 0, 5000, 0, 0,
                2e-4, 48.8);
        Row unpaired = new Row("netreduce", 8192, 2048, "float", "sum", true, 20, 100.0, 0.08, 0.12, 0, 5000, 0, 0,
                1e-4, 12.2);
        String table = Tables.against("netreduce", "ring", List.of(nr, unpaired, ring));
        List<String> rows = table.lines().filter(l -> !l.startsWith("#")).toList();
        assertEquals(1, rows.size(), table);
        assertTrue(rows.get(0).matches("\\s+4096\\s+in-place\\s+0\\.50\\s+0\\.50\\s+4\\.883"), rows.get(0));
    }
}
