/**
 * The thin NetReduce host layer (design brief §6): cut a tensor into messages
 * ({@link io.netreduce.host.MessagePlan}), prepend the INA header
 * ({@link io.netreduce.verbs.roce.InaHeader}), keep at most N messages in flight and post
 * message i+N when result i arrives ({@link io.netreduce.host.WindowedAllReduce}), and
 * check every result's header. Policy (algorithms, staging, fallback) lives in
 * netreduce-collectives.
 */
package io.netreduce.host;
