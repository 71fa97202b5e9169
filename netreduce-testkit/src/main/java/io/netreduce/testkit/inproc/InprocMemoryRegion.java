package io.netreduce.testkit.inproc;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.MemoryRegion;
import java.nio.ByteBuffer;
import java.util.Set;

final class InprocMemoryRegion implements MemoryRegion {
    /** The buffer as registered: two regions over the same buffer object share memory. */
    final ByteBuffer registered;
    private final ByteBuffer view;
    private final int key;
    private final Set<Access> access;

    InprocMemoryRegion(ByteBuffer registered, int key, Set<Access> access) {
        this.registered = registered;
        this.view = registered.duplicate().clear();
        this.key = key;
        this.access = Set.copyOf(access);
    }

    @Override
    public ByteBuffer buffer() {
        return view.duplicate();
    }

    ByteBuffer view() {
        return view;
    }

    @Override
    public int length() {
        return view.capacity();
    }

    @Override
    public int lkey() {
        return key;
    }

    @Override
    public int rkey() {
        return key;
    }

    @Override
    public long address() {
        return 0;
    }

    @Override
    public Set<Access> access() {
        return access;
    }

    @Override
    public void close() {
    }
}
