package io.netreduce.sim.study;

import java.util.Locale;

/** Number formatting shared by tables and titles (always '.' as decimal point). */
final class Format {

    private Format() {
    }

    static String megabytes(double bytes) {
        return String.format(Locale.ROOT, "%.1f", bytes / 1e6);
    }

    static String ms(double seconds) {
        return String.format(Locale.ROOT, "%.2f", seconds * 1e3);
    }

    static String percent(double fraction) {
        return String.format(Locale.ROOT, "%.1f", fraction * 100);
    }

    static String num(String pattern, double v) {
        return String.format(Locale.ROOT, pattern, v);
    }
}
