/** netreduce-collectives: see the design brief's module layout. */
package io.netreduce.collectives;
