package io.netreduce.cli.allreduce;

import io.netreduce.cli.CliException;
import io.netreduce.cli.ExitCode;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.ReduceOp;
import io.netreduce.collectives.algorithm.Algorithms;
import io.netreduce.collectives.algorithm.ElementType;
import io.netreduce.collectives.algorithm.ring.RingAlgorithm;
import io.netreduce.verbs.Capability;
import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.VerbsProvider;
import io.netreduce.verbs.support.UnsupportedOptions;
import java.util.List;

/**
 * What {@code demo} and {@code bench} check before they start a switch and workers: known
 * algorithms (and settings a variant may change, with values the library takes, and device
 * properties the transport reads), a transport that can run here and carry each of them,
 * and loss only where the transport can inject it. Each refusal is one line that says what
 * to use instead.
 */
public final class RunChecks {
    private RunChecks() {
    }

    public static void check(List<String> entries, String transportName, double loss) {
        List<AlgorithmVariant> variants;
        try {
            variants = AlgorithmVariant.parseAll(entries);
        } catch (IllegalArgumentException e) {
            throw new CliException("--algorithm " + e.getMessage(), ExitCode.USAGE, e);
        }
        for (AlgorithmVariant v : variants) {
            try {
                CommunicatorConfig.fromEnvironment(v.settings()); // refuses a value the library would not take
            } catch (IllegalArgumentException e) {
                throw new CliException("--algorithm '" + v.label() + "': " + e.getMessage(), ExitCode.USAGE, e);
            }
        }
        List<String> algorithms = variants.stream().map(AlgorithmVariant::algorithm).toList();
        for (String a : algorithms) {
            if (!Algorithms.isKnown(a)) {
                throw new CliException("unknown algorithm '" + a + "' (" + String.join(", ", Algorithms.names()) + ")",
                        ExitCode.USAGE, null);
            }
        }
        VerbsProvider provider;
        try {
            provider = Verbs.provider(transportName);
        } catch (VerbsException e) {
            throw new CliException("--transport: " + e.getMessage(), ExitCode.USAGE, e);
        }
        TransportCapabilities transport = provider.capabilities();
        for (AlgorithmVariant v : variants) {
            for (String key : v.deviceProperties().keySet()) {
                String why = UnsupportedOptions.unknownProperty(provider, key);
                if (why != null) {
                    throw new CliException("--algorithm '" + v.label() + "': " + why, ExitCode.USAGE, null);
                }
            }
        }
        if (loss > 0 && !transport.has(Capability.INJECTED_FAULTS)) {
            throw new CliException("--loss needs a transport that injects packet loss (" + String.join(", ",
                    Verbs.providersWith(Capability.INJECTED_FAULTS)) + "): '" + transportName + "' carries no packets "
                    + "of its own to drop", ExitCode.USAGE, null);
        }
        for (String a : algorithms) {
            String why = Algorithms.create(a).unsupported(ReduceOp.SUM, ElementType.FLOAT32, transport);
            if (why != null) {
                throw new CliException(why + (algorithms.size() > 1 ? "; or run with --algorithms " + RingAlgorithm.NAME
                        : ""), ExitCode.USAGE, null);
            }
        }
    }
}
