/** All-reduce algorithms (Flat Ring, hierarchical, NetReduce, Parallel NetReduce) as flow schedules. */
package io.netreduce.sim.collective;
