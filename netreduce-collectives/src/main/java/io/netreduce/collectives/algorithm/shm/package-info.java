/**
 * The shared-memory transport between the ranks of one host: segments under
 * {@code /dev/shm} and the intra-host reduce-scatter, all-gather and all-reduce over them.
 */
package io.netreduce.collectives.algorithm.shm;
