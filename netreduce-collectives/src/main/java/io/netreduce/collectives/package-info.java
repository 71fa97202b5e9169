/**
 * The Communicator API (docs/user-guide.md): {@link io.netreduce.collectives.Collectives#open}
 * with a {@link io.netreduce.collectives.CommunicatorConfig} (from the environment or built),
 * then all-reduce, broadcast, all-gather and barrier on FloatBuffers. Backends ("netreduce",
 * "ring") are found through {@link io.netreduce.collectives.spi.CommunicatorProvider}.
 */
package io.netreduce.collectives;
