package io.netreduce.examples.launch;

import io.netreduce.examples.TrainingResult;

import java.util.HashMap;
import java.util.Map;

/**
 * The line a worker prints when it has finished, and the launcher parses:
 * {@code RESULT rank=0 world=2 algorithm=netreduce finalLoss=0.41 digest=ab12...}.
 * Enough to check convergence against the reference and replica identity across
 * processes without shipping parameters around.
 */
public record WorkerSummary(int rank, int worldSize, String algorithm, double finalLoss, String digest) {

    public static WorkerSummary of(TrainingResult result, String algorithm) {
        return new WorkerSummary(result.rank(), result.worldSize(), algorithm, result.finalLoss(),
                result.parameterDigest());
    }

    public String format() {
        return "RESULT rank=" + rank + " world=" + worldSize + " algorithm=" + algorithm
                + " finalLoss=" + finalLoss + " digest=" + digest;
    }

    public static WorkerSummary parse(String line) {
        if (line == null || !line.startsWith("RESULT ")) {
            throw new IllegalArgumentException("not a RESULT line: " + line);
        }
        Map<String, String> fields = new HashMap<>();
        for (String part : line.substring("RESULT ".length()).trim().split("\\s+")) {
            int eq = part.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("malformed field '" + part + "' in: " + line);
            }
            fields.put(part.substring(0, eq), part.substring(eq + 1));
        }
        try {
            return new WorkerSummary(Integer.parseInt(require(fields, "rank", line)),
                    Integer.parseInt(require(fields, "world", line)), require(fields, "algorithm", line),
                    Double.parseDouble(require(fields, "finalLoss", line)), require(fields, "digest", line));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad number in: " + line, e);
        }
    }

    private static String require(Map<String, String> fields, String key, String line) {
        String v = fields.get(key);
        if (v == null) {
            throw new IllegalArgumentException("missing " + key + "= in: " + line);
        }
        return v;
    }
}
