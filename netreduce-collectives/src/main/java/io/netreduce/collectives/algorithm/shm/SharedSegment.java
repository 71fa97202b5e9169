package io.netreduce.collectives.algorithm.shm;

import io.netreduce.collectives.algorithm.DirectBuffers;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.EnumSet;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rank's memory-mapped file under the shared-memory directory ({@code /dev/shm}), which
 * the other ranks of its host map too. The file is named after its creator's process id
 * ({@value #PREFIX}&lt;pid&gt;-&lt;random&gt;) and unlinked as soon as every peer has mapped it
 * ({@link #unlink}), so that from then on the memory lives only as long as some process maps
 * it: a rank killed with SIGKILL leaves nothing behind. A file left by a process that died
 * between creating and unlinking (the join's few milliseconds) is removed by the next
 * {@link #create} on that host ({@link #removeStale}).
 *
 * <p>Counters are 64-bit words read with acquire and written with release semantics
 * ({@link #getAcquire}, {@link #setRelease}): a peer that sees a counter advance sees every
 * byte the owner wrote before it.
 */
final class SharedSegment implements AutoCloseable {
    static final String PREFIX = "netreduce-";
    private static final Logger LOG = LoggerFactory.getLogger(SharedSegment.class);
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final Path path;
    private final MappedByteBuffer buffer;
    private boolean linked;

    private SharedSegment(Path path, MappedByteBuffer buffer, boolean linked) {
        this.path = path;
        this.buffer = buffer;
        this.linked = linked;
    }

    /** A new segment of {@code bytes} (zeroed) in {@code dir}, after removing what dead processes left there. */
    static SharedSegment create(Path dir, int bytes) {
        removeStale(dir);
        Path path = dir.resolve(PREFIX + ProcessHandle.current().pid() + "-"
                + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 1));
        try (FileChannel ch = FileChannel.open(path, EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE))) {
            try {
                // Writing the whole file now makes tmpfs allocate it: a full /dev/shm fails
                // here with an error instead of a SIGBUS at the first touch of a missing page.
                ByteBuffer zeros = ByteBuffer.allocateDirect(Math.min(bytes, 1 << 20));
                for (long at = 0; at < bytes; at += zeros.capacity()) {
                    zeros.clear().limit((int) Math.min(zeros.capacity(), bytes - at));
                    while (zeros.hasRemaining()) {
                        ch.write(zeros, at + zeros.position());
                    }
                }
                MappedByteBuffer b = ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
                return new SharedSegment(path, b, true);
            } catch (IOException | RuntimeException e) {
                Files.deleteIfExists(path);
                throw e;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a shared-memory segment of " + bytes + " bytes at " + path
                    + " (is " + dir + " a writable tmpfs with room for it?): " + e, e);
        }
    }

    /** Maps a peer's segment of {@code bytes}. */
    static SharedSegment open(Path path, int bytes) {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (ch.size() < bytes) {
                throw new IllegalStateException("shared-memory segment " + path + " holds " + ch.size()
                        + " bytes where " + bytes + " were agreed");
            }
            return new SharedSegment(path, ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes), false);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot map the shared-memory segment " + path + ": " + e, e);
        }
    }

    /**
     * Deletes every segment in {@code dir} whose creating process is no longer alive. Its
     * peers, if any still run, keep their mappings; only the name goes.
     */
    static int removeStale(Path dir) {
        int removed = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, PREFIX + "*")) {
            for (Path f : files) {
                String name = f.getFileName().toString();
                int dash = name.indexOf('-', PREFIX.length());
                long pid;
                try {
                    pid = Long.parseLong(name.substring(PREFIX.length(), dash < 0 ? name.length() : dash));
                } catch (NumberFormatException e) {
                    continue; // not one of ours
                }
                if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                    continue;
                }
                try {
                    Files.delete(f);
                    removed++;
                    LOG.info("removed shared-memory segment {} left by process {}, which is gone", f, pid);
                } catch (NoSuchFileException e) {
                    // another rank of this host removed it first
                }
            }
        } catch (IOException e) {
            LOG.debug("cannot scan {} for stale segments: {}", dir, e.toString());
        }
        return removed;
    }

    Path path() {
        return path;
    }

    MappedByteBuffer buffer() {
        return buffer;
    }

    long getAcquire(int offset) {
        return (long) LONGS.getAcquire(buffer, offset);
    }

    void setRelease(int offset, long value) {
        LONGS.setRelease(buffer, offset, value);
    }

    /** Removes the file's name (the creator does it once every peer has mapped it). */
    void unlink() {
        if (linked) {
            linked = false;
            try {
                Files.deleteIfExists(path);
            } catch (IOException e) {
                LOG.warn("cannot remove shared-memory segment {}: {}", path, e.toString());
            }
        }
    }

    /** Unlinks if still linked, and unmaps now rather than whenever the collector gets to it. */
    @Override
    public void close() {
        unlink();
        DirectBuffers.release(buffer);
    }
}
