package io.netreduce.verbs;

/**
 * A reusable list of scatter/gather elements: (memory region, offset, length) triples.
 * Kept as parallel arrays so that filling it for a new post allocates nothing.
 */
public final class ScatterGatherList {
    private final MemoryRegion[] regions;
    private final int[] offsets;
    private final int[] lengths;
    private int count;

    public ScatterGatherList(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1: " + capacity);
        }
        regions = new MemoryRegion[capacity];
        offsets = new int[capacity];
        lengths = new int[capacity];
    }

    /** Appends one element; {@code offset} is relative to the region's buffer. */
    public ScatterGatherList add(MemoryRegion region, int offset, int length) {
        if (count == regions.length) {
            throw new VerbsException("scatter/gather list is full (" + regions.length + " elements)");
        }
        if (region == null) {
            throw new NullPointerException("memory region");
        }
        if (offset < 0 || length < 0 || (long) offset + length > region.length()) {
            throw new VerbsException("SGE [" + offset + ", +" + length + ") lies outside memory region of "
                    + region.length() + " bytes (lkey " + region.lkey() + ")");
        }
        regions[count] = region;
        offsets[count] = offset;
        lengths[count] = length;
        count++;
        return this;
    }

    public ScatterGatherList clear() {
        for (int i = 0; i < count; i++) {
            regions[i] = null;
        }
        count = 0;
        return this;
    }

    public int count() {
        return count;
    }

    public int capacity() {
        return regions.length;
    }

    public MemoryRegion region(int i) {
        check(i);
        return regions[i];
    }

    public int offset(int i) {
        check(i);
        return offsets[i];
    }

    public int length(int i) {
        check(i);
        return lengths[i];
    }

    /** Sum of the element lengths. */
    public long totalLength() {
        long total = 0;
        for (int i = 0; i < count; i++) {
            total += lengths[i];
        }
        return total;
    }

    /** Copies another list's elements into this one (used by providers to own a posted list). */
    public void copyFrom(ScatterGatherList other) {
        if (other.count > regions.length) {
            throw new VerbsException("scatter/gather list has " + other.count + " elements, the queue allows "
                    + regions.length);
        }
        clear();
        System.arraycopy(other.regions, 0, regions, 0, other.count);
        System.arraycopy(other.offsets, 0, offsets, 0, other.count);
        System.arraycopy(other.lengths, 0, lengths, 0, other.count);
        count = other.count;
    }

    private void check(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("SGE " + i + " of " + count);
        }
    }
}
