/**
 * The software NetReduce switch: an I/O-free aggregation engine
 * ({@link io.netreduce.netswitch.engine}), a UDP data plane on port 4791
 * ({@link io.netreduce.netswitch.dataplane}) and an HTTP/JSON control plane
 * ({@link io.netreduce.netswitch.control}), started together by {@link io.netreduce.netswitch.SwitchServer}.
 *
 * <p>The package is {@code netswitch} rather than {@code switch} because {@code switch} is a
 * Java keyword and cannot name a package.
 */
package io.netreduce.netswitch;
