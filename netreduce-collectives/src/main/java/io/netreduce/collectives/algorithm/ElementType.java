package io.netreduce.collectives.algorithm;

import io.netreduce.wire.ina.InaHeader;

/** The element types of tensors, with the INA dtype a switch knows each by. */
public enum ElementType {
    FLOAT32(InaHeader.DTYPE_FP32),
    INT32(InaHeader.DTYPE_INT32);

    private final int inaDtype;

    ElementType(int inaDtype) {
        this.inaDtype = inaDtype;
    }

    public int inaDtype() {
        return inaDtype;
    }
}
