package io.netreduce.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Byte sizes as users type them ("4K", "4KiB", "64M", "1G", "1048576"; K = 1024) and
 * size ranges as the commands take them: {@code 4K-64M} doubles from 4 KiB to 64 MiB,
 * {@code 4K-64M:4} multiplies by 4, and {@code 4K,1M,16M} lists sizes.
 */
public final class Sizes {
    private Sizes() {
    }

    public static long parse(String text) {
        String t = text.trim().toUpperCase(Locale.ROOT);
        if (t.endsWith("IB")) {
            t = t.substring(0, t.length() - 2);
        } else if (t.endsWith("B") && t.length() > 1 && !Character.isDigit(t.charAt(t.length() - 2))) {
            t = t.substring(0, t.length() - 1);
        } else if (t.endsWith("B")) {
            t = t.substring(0, t.length() - 1);
        }
        long unit = 1;
        if (!t.isEmpty()) {
            switch (t.charAt(t.length() - 1)) {
                case 'K' -> unit = 1L << 10;
                case 'M' -> unit = 1L << 20;
                case 'G' -> unit = 1L << 30;
                default -> unit = 1;
            }
        }
        String digits = unit == 1 ? t : t.substring(0, t.length() - 1);
        try {
            long v = Long.parseLong(digits.trim());
            if (v < 0) {
                throw new NumberFormatException();
            }
            return Math.multiplyExact(v, unit);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("not a size: '" + text + "' (examples: 4096, 4K, 64MiB, 1G)");
        }
    }

    /** Sizes from {@code min} to {@code max} (inclusive), each {@code factor} times the last. */
    public static List<Long> range(long min, long max, long factor) {
        if (min <= 0 || max < min) {
            throw new IllegalArgumentException("size range must satisfy 0 < min <= max: " + min + " .. " + max);
        }
        if (factor < 2) {
            throw new IllegalArgumentException("size factor must be at least 2: " + factor);
        }
        List<Long> sizes = new ArrayList<>();
        for (long s = min; s <= max; s = s * factor) {
            sizes.add(s);
            if (s > Long.MAX_VALUE / factor) {
                break;
            }
        }
        return sizes;
    }

    /** Parses "4K-64M", "4K-64M:4", "4K,1M" or a single size. */
    public static List<Long> parseList(String text) {
        String t = text.trim();
        if (t.contains(",")) {
            List<Long> sizes = new ArrayList<>();
            for (String part : t.split(",")) {
                sizes.add(positive(parse(part), text));
            }
            return sizes;
        }
        int dash = t.indexOf('-');
        if (dash > 0) {
            long factor = 2;
            String hi = t.substring(dash + 1);
            int colon = hi.indexOf(':');
            if (colon >= 0) {
                factor = Long.parseLong(hi.substring(colon + 1).trim());
                hi = hi.substring(0, colon);
            }
            return range(parse(t.substring(0, dash)), parse(hi), factor);
        }
        return List.of(positive(parse(t), text));
    }

    private static long positive(long v, String text) {
        if (v <= 0) {
            throw new IllegalArgumentException("sizes must be positive: '" + text + "'");
        }
        return v;
    }

    /** "4 KiB", "64 MiB", "1000 B": for progress lines and summaries. */
    public static String human(long bytes) {
        if (bytes >= (1L << 30) && bytes % (1L << 30) == 0) {
            return (bytes >> 30) + " GiB";
        }
        if (bytes >= (1L << 20) && bytes % (1L << 20) == 0) {
            return (bytes >> 20) + " MiB";
        }
        if (bytes >= (1L << 10) && bytes % (1L << 10) == 0) {
            return (bytes >> 10) + " KiB";
        }
        return bytes + " B";
    }

    /** picocli converter for a list or range of sizes. */
    public static final class ListConverter implements picocli.CommandLine.ITypeConverter<List<Long>> {
        @Override
        public List<Long> convert(String value) {
            return parseList(value);
        }
    }

    /** picocli converter for one size. */
    public static final class SizeConverter implements picocli.CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            return parse(value);
        }
    }
}
