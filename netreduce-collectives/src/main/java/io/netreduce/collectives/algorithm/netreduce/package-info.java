/**
 * The thin NetReduce host layer (docs/architecture.md): cut a tensor into messages
 * ({@link io.netreduce.collectives.algorithm.MessagePlan}), prepend the INA header
 * ({@link io.netreduce.wire.ina.InaHeader}), keep at most N messages in flight and post
 * message i+N when result i arrives ({@link io.netreduce.collectives.algorithm.netreduce.WindowedAllReduce}), and
 * check every result's header. Policy (algorithms, staging, fallback) lives in
 * netreduce-collectives.
 */
package io.netreduce.collectives.algorithm.netreduce;
