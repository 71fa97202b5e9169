/**
 * Flow-level discrete-event engine: links with capacity and latency, flow groups with
 * dependencies, max-min fair rates recomputed at every flow arrival and completion.
 */
package io.netreduce.sim.engine;
