package io.netreduce.examples.launch;

import io.netreduce.examples.TrainingResult;

import java.util.List;

/**
 * The outcome of a local data-parallel run next to its single-process reference:
 * the relative gap of the final losses and whether every replica holds the same bits.
 */
public record DemoReport(TrainingResult reference, List<WorkerSummary> workers, String requestedBackend) {

    /** The criterion: the data-parallel final loss within 0.5 % of the reference's. */
    public static final double TOLERANCE = 0.005;

    public double relativeLossGap() {
        double worst = 0;
        for (WorkerSummary w : workers) {
            worst = Math.max(worst, Math.abs(w.finalLoss() - reference.finalLoss()) / Math.abs(reference.finalLoss()));
        }
        return worst;
    }

    public boolean replicasIdentical() {
        return workers.stream().map(WorkerSummary::digest).distinct().count() == 1;
    }

    public boolean converged() {
        double[] loss = reference.epochLoss();
        return loss[loss.length - 1] < loss[0];
    }

    /** Every worker ran the backend asked for (a fallback, where allowed, names another in algorithm()). */
    public boolean backendHonoured() {
        return workers.stream().allMatch(w -> w.algorithm().equals(requestedBackend));
    }

    public boolean passed() {
        return backendHonoured() && converged() && replicasIdentical() && relativeLossGap() < TOLERANCE;
    }

    public String describe() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format("single-process reference: final loss %.6f, digest %s%n",
                reference.finalLoss(), reference.parameterDigest().substring(0, 16)));
        for (WorkerSummary w : workers) {
            sb.append(String.format("rank %d (%s): final loss %.6f, digest %s%n", w.rank(), w.algorithm(),
                    w.finalLoss(), w.digest().substring(0, 16)));
        }
        sb.append(String.format("final-loss gap to reference: %.3e (limit %.1e); replicas bitwise identical: %s%n",
                relativeLossGap(), TOLERANCE, replicasIdentical()));
        if (!backendHonoured()) {
            sb.append("backend ").append(requestedBackend).append(" was requested but not used by every worker\n");
        }
        sb.append(passed() ? "PASS" : "FAIL");
        return sb.toString();
    }
}
