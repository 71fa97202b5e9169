/** The float reductions the hosts run (ring and shared memory): Vector API, or heap arrays where it is absent. */
package io.netreduce.collectives.algorithm.kernel;
