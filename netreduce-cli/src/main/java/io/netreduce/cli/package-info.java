/** netreduce-cli: see the design brief's module layout. */
package io.netreduce.cli;
