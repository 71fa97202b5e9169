package io.netreduce.verbs;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/** Entry point: finds providers by name through {@link ServiceLoader}. */
public final class Verbs {
    private Verbs() {
    }

    /** Every provider on the class path, available or not. */
    public static List<VerbsProvider> providers() {
        List<VerbsProvider> list = new ArrayList<>();
        ServiceLoader.load(VerbsProvider.class, Verbs.class.getClassLoader()).forEach(list::add);
        return list;
    }

    /**
     * The provider called {@code name}; throws {@link VerbsException} listing the known
     * names if there is none, or saying why if it cannot run here.
     */
    public static VerbsProvider provider(String name) {
        List<String> known = new ArrayList<>();
        for (VerbsProvider p : providers()) {
            if (p.name().equalsIgnoreCase(name)) {
                String reason = p.unavailableReason();
                if (reason != null) {
                    throw new VerbsException("verbs provider '" + p.name() + "' cannot start: " + reason);
                }
                return p;
            }
            known.add(p.name());
        }
        throw new VerbsException("unknown verbs provider '" + name + "'; known providers: " + known);
    }

    /** The names of the registered providers that have {@code c}, for messages that suggest one. */
    public static List<String> providersWith(Capability c) {
        List<String> names = new ArrayList<>();
        for (VerbsProvider p : providers()) {
            if (p.capabilities().has(c)) {
                names.add(p.name());
            }
        }
        return names;
    }

    /** Opens a device of the named provider. */
    public static Device open(String providerName, DeviceOptions options) {
        return provider(providerName).open(options);
    }
}
