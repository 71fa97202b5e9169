package io.netreduce.verbs;

/**
 * One completion (ibverbs' {@code ibv_wc}). Mutable so that a poller can reuse an array of
 * them; {@link CompletionQueue#poll} overwrites every field.
 */
public final class WorkCompletion {
    private long wrId;
    private WcStatus status = WcStatus.SUCCESS;
    private WcOpcode opcode = WcOpcode.SEND;
    private int byteLength;
    private int immediate;
    private boolean hasImmediate;
    private int qpn;
    private String detail = "";

    public long wrId() {
        return wrId;
    }

    public WcStatus status() {
        return status;
    }

    public WcOpcode opcode() {
        return opcode;
    }

    /** Bytes received (receive completions) or sent (send completions). */
    public int byteLength() {
        return byteLength;
    }

    public int immediate() {
        return immediate;
    }

    public boolean hasImmediate() {
        return hasImmediate;
    }

    /** The local queue pair this completion belongs to. */
    public int qpn() {
        return qpn;
    }

    /** Provider's explanation of an error status (empty on success). */
    public String detail() {
        return detail;
    }

    /** Fills every field; used by providers. */
    public WorkCompletion set(long wrId, WcStatus status, WcOpcode opcode, int byteLength,
                              boolean hasImmediate, int immediate, int qpn, String detail) {
        this.wrId = wrId;
        this.status = status;
        this.opcode = opcode;
        this.byteLength = byteLength;
        this.hasImmediate = hasImmediate;
        this.immediate = immediate;
        this.qpn = qpn;
        this.detail = detail == null ? "" : detail;
        return this;
    }

    /** Copies another completion into this one. */
    public WorkCompletion copyFrom(WorkCompletion o) {
        return set(o.wrId, o.status, o.opcode, o.byteLength, o.hasImmediate, o.immediate, o.qpn, o.detail);
    }

    @Override
    public String toString() {
        return "WC{wrId=" + wrId + ", qpn=" + qpn + ", " + opcode + ", " + status
                + ", bytes=" + byteLength + (hasImmediate ? ", imm=0x" + Integer.toHexString(immediate) : "")
                + (detail.isEmpty() ? "" : ", " + detail) + "}";
    }
}
