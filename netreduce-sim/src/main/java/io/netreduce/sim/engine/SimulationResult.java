package io.netreduce.sim.engine;

/**
 * Summary of one simulation run.
 *
 * @param makespan     simulated seconds until the last transfer was delivered
 * @param transfers    flow groups simulated
 * @param flows        flows those groups stand for (sum of multiplicities)
 * @param events       sends and deliveries processed
 * @param allocations  max-min rate recomputations
 */
public record SimulationResult(double makespan, long transfers, long flows, long events, long allocations) {
}
