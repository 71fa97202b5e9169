/** Models' gradient sizes and FLOPs computed from their architectures, and per-iteration timing. */
package io.netreduce.sim.model;
