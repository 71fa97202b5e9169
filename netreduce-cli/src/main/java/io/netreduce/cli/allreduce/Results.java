package io.netreduce.cli.allreduce;

import io.netreduce.cli.CliException;
import io.netreduce.cli.Json;
import io.netreduce.cli.Sizes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Collects the workers' result lines (thread-safe: each worker's stdout is pumped by its
 * own thread) and combines them into rows once every rank has reported.
 */
public final class Results {
    private final int worldSize;
    private final Map<Key, List<RankResult>> byKey = new LinkedHashMap<>();
    private final ResultListener listener;

    /** Told when a row is complete, e.g. to show progress. */
    public interface ResultListener {
        void rowComplete(Row row);
    }

    private record Key(String algorithm, long bytes, boolean inPlace) {
    }

    public Results(int worldSize, ResultListener listener) {
        this.worldSize = worldSize;
        this.listener = Objects.requireNonNull(listener);
        warmUp();
    }

    /**
     * Parses and combines one result, and formats it as a progress line would, before any
     * worker measures: the first use of Jackson and of this code costs this process a few
     * hundred ms of CPU, which it would otherwise spend, on the ranks' cores, while they
     * time the phase after their first (measured: the first size's second placement took
     * 105 µs per call instead of 17).
     */
    private static void warmUp() {
        RankResult sample = Json.read(Json.write(new RankResult(0, "warm-up", 4, 1, true, 1, 1, 0, 0, 0, 0, 0)),
                RankResult.class);
        Row row = Row.combine(List.of(sample), 1);
        String.format(java.util.Locale.ROOT, "%s %8s %10.1f us", row.algorithm(), Sizes.human(row.size()),
                row.timeUs());
    }

    /** Accepts one stdout line of a worker; returns false if it is not a result line. */
    public boolean accept(String line) {
        if (!line.startsWith(RankResult.PREFIX)) {
            return false;
        }
        RankResult r = Json.read(line.substring(RankResult.PREFIX.length()), RankResult.class);
        if (r.rank() < 0 || r.rank() >= worldSize) {
            throw new CliException("result from rank " + r.rank() + " outside 0.." + (worldSize - 1));
        }
        Row complete = null;
        synchronized (this) {
            List<RankResult> list = byKey.computeIfAbsent(new Key(r.algorithm(), r.bytes(), r.inPlace()),
                    k -> new ArrayList<>());
            list.add(r);
            if (list.size() == worldSize) {
                complete = Row.combine(list, worldSize);
            }
        }
        if (complete != null) {
            listener.rowComplete(complete);
        }
        return true;
    }

    /** Every complete row in arrival order; throws if a rank's result is missing. */
    public synchronized List<Row> rows() {
        List<Row> rows = new ArrayList<>();
        for (Map.Entry<Key, List<RankResult>> e : byKey.entrySet()) {
            if (e.getValue().size() != worldSize) {
                throw new CliException("only " + e.getValue().size() + " of " + worldSize + " ranks reported "
                        + e.getKey().algorithm() + " at " + e.getKey().bytes() + " B");
            }
            rows.add(Row.combine(e.getValue(), worldSize));
        }
        return rows;
    }
}
