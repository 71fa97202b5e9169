package io.netreduce.cli;

import io.netreduce.cli.launch.CoreBinding;
import picocli.CommandLine.Option;

/** {@code --bind core|none}: whether local rank processes are bound to cores ({@link CoreBinding}). */
final class BindOption {
    enum Bind { core, none }

    @Option(names = "--bind", paramLabel = "core|none", defaultValue = "core",
            description = "Bind each local rank to a core of its own where there are as many cores as ranks, as "
                    + "mpirun does at two ranks (with taskset); none leaves them to the scheduler. "
                    + "Default ${DEFAULT-VALUE}.")
    Bind bind;

    CoreBinding binding(int ranks) {
        return bind == Bind.core ? CoreBinding.forRanks(ranks) : CoreBinding.none();
    }
}
