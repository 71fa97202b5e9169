package io.netreduce.collectives.spi;

import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.CommunicatorConfig;

/**
 * A collectives backend, registered in
 * {@code META-INF/services/io.netreduce.collectives.spi.CommunicatorProvider} and found by
 * name through {@link io.netreduce.collectives.Collectives#open(String, CommunicatorConfig)}.
 * Built in: "netreduce" (in-network aggregation, falling back to ring without a switch) and
 * "ring".
 */
public interface CommunicatorProvider {

    /** The name frameworks ask for, e.g. "netreduce". */
    String name();

    /** One line on what it is. */
    String description();

    /** Joins the group {@code config} describes; blocks until every rank has joined or the timeout passes. */
    Communicator open(CommunicatorConfig config);
}
