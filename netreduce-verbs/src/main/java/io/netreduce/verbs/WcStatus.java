package io.netreduce.verbs;

/**
 * Completion statuses, named and numbered as ibverbs' {@code ibv_wc_status} so logs read
 * the same on every provider.
 */
public enum WcStatus {
    SUCCESS(0, "success"),
    LOC_LEN_ERR(1, "local length error: the message does not fit the posted receive buffers"),
    LOC_QP_OP_ERR(2, "local QP operation error"),
    LOC_PROT_ERR(4, "local protection error: an SGE lies outside its memory region or lacks access"),
    WR_FLUSH_ERR(5, "flushed: the queue pair entered the error state before this request ran"),
    REM_INV_REQ_ERR(9, "remote invalid request"),
    REM_ACCESS_ERR(10, "remote access error: bad rkey, range or access rights at the responder"),
    REM_OP_ERR(11, "remote operational error"),
    RETRY_EXC_ERR(12, "transport retry counter exceeded: the peer stopped acknowledging"),
    RNR_RETRY_EXC_ERR(13, "RNR retry counter exceeded: the peer posted no receive in time"),
    GENERAL_ERR(21, "general error");

    private final int code;
    private final String description;

    WcStatus(int code, String description) {
        this.code = code;
        this.description = description;
    }

    /** The numeric value of the matching {@code ibv_wc_status}. */
    public int code() {
        return code;
    }

    public String description() {
        return description;
    }

    public boolean isSuccess() {
        return this == SUCCESS;
    }
}
