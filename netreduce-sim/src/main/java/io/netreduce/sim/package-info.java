/** netreduce-sim: see the design brief's module layout. */
package io.netreduce.sim;
