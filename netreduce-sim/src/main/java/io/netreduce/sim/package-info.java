/**
 * netreduce-sim: a flow-level cluster simulator for Flat Ring, hierarchical, NetReduce and
 * Parallel NetReduce all-reduce, from a few GPUs to tens of thousands. Entry points:
 * {@link io.netreduce.sim.collective.AllReduceSimulator} for one all-reduce and
 * {@link io.netreduce.sim.study.ScalingStudy} for the whole study. See docs/simulation.md.
 */
package io.netreduce.sim;
