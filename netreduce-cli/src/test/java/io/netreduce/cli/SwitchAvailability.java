package io.netreduce.cli;

/** Whether the software switch is on the class path (it lands in parallel with the CLI). */
final class SwitchAvailability {
    private SwitchAvailability() {
    }

    static boolean present() {
        return false;
    }
}
