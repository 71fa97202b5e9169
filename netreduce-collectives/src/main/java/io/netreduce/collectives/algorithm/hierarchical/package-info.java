/** Hierarchical all-reduce for ranks that share hosts: Parallel NetReduce and the hierarchical ring. */
package io.netreduce.collectives.algorithm.hierarchical;
