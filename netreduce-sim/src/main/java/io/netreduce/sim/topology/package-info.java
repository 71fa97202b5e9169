/** Cluster description (machines, GPUs, NICs, leaves, aggregating switches) and its link classes. */
package io.netreduce.sim.topology;
