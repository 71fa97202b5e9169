package io.netreduce.sim.study;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Everything the scaling study produced: tables (written as CSV) and charts (written as PNG).
 *
 * @param tables            CSV base name → table
 * @param plots             charts to draw
 * @param largestGpus       the largest GPU count simulated
 * @param largestWallSeconds wall-clock seconds spent simulating all algorithms at that count
 */
public record StudyResult(Map<String, Table> tables, List<PlotSpec> plots, int largestGpus, double largestWallSeconds) {

    /** A chart: its PNG base name, titles, axis scales and series. */
    public record PlotSpec(String name, String title, String xTitle, String yTitle, boolean logX, boolean logY,
                           List<Plots.Series> series) {
    }

    public Table table(String name) {
        Table t = tables.get(name);
        if (t == null) {
            throw new IllegalArgumentException("no table '" + name + "'; have " + tables.keySet());
        }
        return t;
    }

    /** Writes every table as {@code name.csv} and, if asked, every chart as {@code name.png}; returns the files. */
    public List<Path> writeTo(Path directory, boolean withPlots) throws IOException {
        Files.createDirectories(directory);
        List<Path> written = new ArrayList<>();
        for (Map.Entry<String, Table> e : tables.entrySet()) {
            Path f = directory.resolve(e.getKey() + ".csv");
            e.getValue().writeCsv(f);
            written.add(f);
        }
        if (withPlots) {
            for (PlotSpec p : plots) {
                Path f = directory.resolve(p.name() + ".png");
                Plots.line(f, p.title(), p.xTitle(), p.yTitle(), p.logX(), p.logY(), p.series());
                written.add(f);
            }
        }
        return written;
    }
}
