/** Implementation of the built-in backends: setup, algorithms, memory; not a public API. */
package io.netreduce.collectives.internal;
