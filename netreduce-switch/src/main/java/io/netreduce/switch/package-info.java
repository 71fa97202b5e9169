/** netreduce-switch: see the design brief's module layout. */
package io.netreduce.switch;
