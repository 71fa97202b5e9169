package io.netreduce.verbs.disni;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.SendOpcode;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import java.util.Set;

/**
 * Pure translations between this API and the ibverbs numbers DiSNI passes through
 * ({@code ibv_wc_status}, {@code ibv_wc_opcode}, {@code ibv_wr_opcode}, access flags,
 * {@code rdma_cm_event_type}). No DiSNI class is touched, so they run and are tested
 * everywhere.
 */
final class DisniMapping {
    /** {@code IBV_WC_WITH_IMM} in {@code ibv_wc.wc_flags}. */
    static final int WC_WITH_IMM = 1 << 1;
    /** {@code IBV_SEND_SIGNALED} and {@code IBV_SEND_SOLICITED} in {@code ibv_send_wr.send_flags}. */
    static final int SEND_SIGNALED = 1 << 1;
    static final int SEND_SOLICITED = 1 << 2;

    /** {@code enum ibv_wc_status} names by value, for error details. */
    private static final String[] IBV_WC_STATUS = {
        "IBV_WC_SUCCESS", "IBV_WC_LOC_LEN_ERR", "IBV_WC_LOC_QP_OP_ERR", "IBV_WC_LOC_EEC_OP_ERR",
        "IBV_WC_LOC_PROT_ERR", "IBV_WC_WR_FLUSH_ERR", "IBV_WC_MW_BIND_ERR", "IBV_WC_BAD_RESP_ERR",
        "IBV_WC_LOC_ACCESS_ERR", "IBV_WC_REM_INV_REQ_ERR", "IBV_WC_REM_ACCESS_ERR", "IBV_WC_REM_OP_ERR",
        "IBV_WC_RETRY_EXC_ERR", "IBV_WC_RNR_RETRY_EXC_ERR", "IBV_WC_LOC_RDD_VIOL_ERR", "IBV_WC_REM_INV_RD_REQ_ERR",
        "IBV_WC_REM_ABORT_ERR", "IBV_WC_INV_EECN_ERR", "IBV_WC_INV_EEC_STATE_ERR", "IBV_WC_FATAL_ERR",
        "IBV_WC_RESP_TIMEOUT_ERR", "IBV_WC_GENERAL_ERR"};

    /** {@code enum rdma_cm_event_type} names by value. */
    private static final String[] CM_EVENT = {
        "ADDR_RESOLVED", "ADDR_ERROR", "ROUTE_RESOLVED", "ROUTE_ERROR", "CONNECT_REQUEST", "CONNECT_RESPONSE",
        "CONNECT_ERROR", "UNREACHABLE", "REJECTED", "ESTABLISHED", "DISCONNECTED", "DEVICE_REMOVAL",
        "MULTICAST_JOIN", "MULTICAST_ERROR", "ADDR_CHANGE", "TIMEWAIT_EXIT"};

    static final int CM_ADDR_RESOLVED = 0;
    static final int CM_ADDR_ERROR = 1;
    static final int CM_ROUTE_RESOLVED = 2;
    static final int CM_ROUTE_ERROR = 3;
    static final int CM_CONNECT_REQUEST = 4;
    static final int CM_CONNECT_RESPONSE = 5;
    static final int CM_CONNECT_ERROR = 6;
    static final int CM_UNREACHABLE = 7;
    static final int CM_REJECTED = 8;
    static final int CM_ESTABLISHED = 9;
    static final int CM_DISCONNECTED = 10;
    static final int CM_DEVICE_REMOVAL = 11;
    static final int CM_TIMEWAIT_EXIT = 15;

    private DisniMapping() {
    }

    /**
     * Maps an {@code ibv_wc_status}. Statuses this API does not name map to the closest one
     * (the detail text keeps the original name).
     */
    static WcStatus status(int ibvStatus) {
        for (WcStatus s : WcStatus.values()) {
            if (s.code() == ibvStatus) {
                return s;
            }
        }
        switch (ibvStatus) {
            case 8: // LOC_ACCESS_ERR: the local side of a protection check
            case 14: // LOC_RDD_VIOL_ERR
                return WcStatus.LOC_PROT_ERR;
            case 15: // REM_INV_RD_REQ_ERR
                return WcStatus.REM_INV_REQ_ERR;
            case 16: // REM_ABORT_ERR
                return WcStatus.REM_OP_ERR;
            case 20: // RESP_TIMEOUT_ERR: the responder stopped answering
                return WcStatus.RETRY_EXC_ERR;
            case 3: // LOC_EEC_OP_ERR
                return WcStatus.LOC_QP_OP_ERR;
            default: // MW_BIND_ERR, BAD_RESP_ERR, INV_EECN_ERR, INV_EEC_STATE_ERR, FATAL_ERR, unknown
                return WcStatus.GENERAL_ERR;
        }
    }

    static String statusName(int ibvStatus) {
        return ibvStatus >= 0 && ibvStatus < IBV_WC_STATUS.length ? IBV_WC_STATUS[ibvStatus]
                : "ibv_wc_status " + ibvStatus;
    }

    /** Maps an {@code ibv_wc_opcode}; null for operations this API does not post (READ, atomics, binds). */
    static WcOpcode opcode(int ibvOpcode) {
        switch (ibvOpcode) {
            case 0: return WcOpcode.SEND;
            case 1: return WcOpcode.RDMA_WRITE;
            case 128: return WcOpcode.RECV;
            case 129: return WcOpcode.RECV_RDMA_WITH_IMM;
            default: return null;
        }
    }

    /** The {@code ibv_wr_opcode} of a send request. */
    static int sendOpcode(SendOpcode op) {
        switch (op) {
            case RDMA_WRITE: return 0;
            case RDMA_WRITE_WITH_IMM: return 1;
            case SEND: return 2;
            case SEND_WITH_IMM: return 3;
            default: throw new IllegalArgumentException("unsupported opcode " + op);
        }
    }

    /** The {@code ibv_access_flags} of a registration. */
    static int accessFlags(Set<Access> access) {
        int flags = 0;
        for (Access a : access) {
            switch (a) {
                case LOCAL_WRITE: flags |= 1; break;
                case REMOTE_WRITE: flags |= 2; break;
                case REMOTE_READ: flags |= 4; break;
                default: throw new IllegalArgumentException("unsupported access " + a);
            }
        }
        // ibverbs refuses REMOTE_WRITE without LOCAL_WRITE; say so here rather than as EINVAL.
        if ((flags & 2) != 0 && (flags & 1) == 0) {
            throw new IllegalArgumentException("REMOTE_WRITE access requires LOCAL_WRITE (as in ibverbs)");
        }
        return flags;
    }

    static String cmEventName(int event) {
        return event >= 0 && event < CM_EVENT.length ? "RDMA_CM_EVENT_" + CM_EVENT[event] : "rdma_cm_event " + event;
    }
}
