package io.netreduce.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.VerbsException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The DiSNI provider where it cannot run: it is listed, and refuses to start at once, saying why. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class DisniProviderTest {

    @Test
    void isRegisteredUnderItsName() {
        assertTrue(Verbs.providers().stream().anyMatch(p -> p.name().equals("disni")), "disni is on the service list");
    }

    @Test
    void selectionAndOpenFailFastNamingWhatIsMissing() {
        String reason = new DisniVerbsProvider().unavailableReason();
        assumeTrue(reason != null, "this machine can run DiSNI; the conformance leg covers it");
        long start = System.nanoTime();
        VerbsException bySelection = assertThrows(VerbsException.class, () -> Verbs.provider("disni"));
        assertTrue(bySelection.getMessage().contains("cannot start") && bySelection.getMessage().contains(reason),
                bySelection.getMessage());
        VerbsException byOpen = assertThrows(VerbsException.class,
                () -> new DisniVerbsProvider().open(DeviceOptions.builder().build()));
        assertTrue(byOpen.getMessage().contains(reason), byOpen.getMessage());
        assertTrue(reason.contains("native/README.md"), "the reason points at the install notes: " + reason);
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2), "fails at once");
    }
}
