/** netreduce-host: see the design brief's module layout. */
package io.netreduce.host;
