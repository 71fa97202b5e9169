/** The scaling study: sweeps, per-model tables, comparison with the paper, CSV and PNG output. */
package io.netreduce.sim.study;
