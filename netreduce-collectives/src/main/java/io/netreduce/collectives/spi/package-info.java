/** Service-provider interface: how frameworks find collectives backends by name. */
package io.netreduce.collectives.spi;
