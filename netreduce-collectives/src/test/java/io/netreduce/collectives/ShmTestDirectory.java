package io.netreduce.collectives;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * A directory of one test's own under {@code /dev/shm} for the ranks' shared-memory segments
 * (they get it as {@code -Dnetreduce.shm.dir}), so that other processes' segments cannot
 * confuse the test's check that none is left behind; removed with whatever is in it.
 */
final class ShmTestDirectory implements AutoCloseable {
    private final Path path;

    ShmTestDirectory() throws IOException {
        path = Files.createTempDirectory(Path.of("/dev/shm"), "netreduce-test-");
    }

    Path path() {
        return path;
    }

    /** The JVM option that sends a rank's segments here. */
    String jvmOption() {
        return "-Dnetreduce.shm.dir=" + path;
    }

    /** The names of the files in it now. */
    List<String> files() throws IOException {
        try (Stream<Path> files = Files.list(path)) {
            return files.map(f -> f.getFileName().toString()).toList();
        }
    }

    @Override
    public void close() {
        try {
            try (Stream<Path> files = Files.list(path)) {
                for (Path f : files.toList()) {
                    Files.deleteIfExists(f);
                }
            }
            Files.deleteIfExists(path);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
