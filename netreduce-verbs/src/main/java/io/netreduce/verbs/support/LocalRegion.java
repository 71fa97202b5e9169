package io.netreduce.verbs.support;

import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;

/** What the shared scatter-gather check ({@link ScatterGather}) needs to know of a provider's regions. */
public interface LocalRegion extends MemoryRegion {

    /** The protection domain the region was registered in. */
    ProtectionDomain protectionDomain();

    /** False once deregistered. */
    boolean isOpen();
}
