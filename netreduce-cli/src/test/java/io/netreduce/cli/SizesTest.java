package io.netreduce.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class SizesTest {
    @Test
    void parsesUnits() {
        assertEquals(4096, Sizes.parse("4K"));
        assertEquals(4096, Sizes.parse("4KiB"));
        assertEquals(4096, Sizes.parse("4kb"));
        assertEquals(64L << 20, Sizes.parse("64M"));
        assertEquals(1L << 30, Sizes.parse("1G"));
        assertEquals(1000, Sizes.parse("1000"));
    }

    @Test
    void rangesDoubleByDefault() {
        assertEquals(List.of(4096L, 8192L, 16384L), Sizes.parseList("4K-16K"));
        assertEquals(List.of(1024L, 4096L, 16384L), Sizes.parseList("1K-16K:4"));
        assertEquals(List.of(64L, 4096L), Sizes.parseList("64,4K"));
    }

    @Test
    void rejectsNonsense() {
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("12Q"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("-4K"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parseList("16K-4K"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parseList("1K-16K:1"));
    }

    @Test
    void humanReadable() {
        assertEquals("4 KiB", Sizes.human(4096));
        assertEquals("64 MiB", Sizes.human(64L << 20));
        assertEquals("1000 B", Sizes.human(1000));
    }
}
