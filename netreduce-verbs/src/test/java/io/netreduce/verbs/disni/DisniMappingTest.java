package io.netreduce.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmEvent;
import io.netreduce.verbs.Access;
import io.netreduce.verbs.SendOpcode;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * The DiSNI translations checked against DiSNI's own enums and constants (pure Java
 * classes of its jar: no native library needed), so a mismatch with the binding shows
 * here on any machine.
 */
class DisniMappingTest {

    @Test
    void everyIbverbsStatusMapsToTheSameNamedStatusOrItsClosestKin() {
        IbvWC.IbvWcStatus[] all = IbvWC.IbvWcStatus.values();
        for (int value = 0; value < all.length; value++) {
            assertEquals(all[value], IbvWC.IbvWcStatus.valueOf(value), "DiSNI numbers statuses by ibverbs value");
            assertEquals(all[value].name(), DisniMapping.statusName(value), "name of ibv_wc_status " + value);
            WcStatus mapped = DisniMapping.status(value);
            String ours = "IBV_WC_" + mapped.name();
            if (ours.equals(all[value].name())) {
                assertEquals(value, mapped.code());
            }
        }
        assertEquals(WcStatus.SUCCESS, DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_SUCCESS.ordinal()));
        assertEquals(WcStatus.REM_ACCESS_ERR, DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_REM_ACCESS_ERR.ordinal()));
        assertEquals(WcStatus.RETRY_EXC_ERR, DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_RETRY_EXC_ERR.ordinal()));
        assertEquals(WcStatus.RNR_RETRY_EXC_ERR, DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_RNR_RETRY_EXC_ERR.ordinal()));
        assertEquals(WcStatus.WR_FLUSH_ERR, DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_WR_FLUSH_ERR.ordinal()));
        assertEquals(WcStatus.LOC_LEN_ERR, DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_LOC_LEN_ERR.ordinal()));
        assertEquals(WcStatus.GENERAL_ERR, DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_GENERAL_ERR.ordinal()));
        assertEquals(WcStatus.LOC_PROT_ERR, DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_LOC_ACCESS_ERR.ordinal()));
        assertEquals(WcStatus.RETRY_EXC_ERR, DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_RESP_TIMEOUT_ERR.ordinal()));
        assertEquals(WcStatus.REM_OP_ERR, DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_REM_ABORT_ERR.ordinal()));
        assertEquals(WcStatus.GENERAL_ERR, DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_FATAL_ERR.ordinal()));
        assertEquals(WcStatus.GENERAL_ERR, DisniMapping.status(999));
        assertEquals("ibv_wc_status 999", DisniMapping.statusName(999));
    }

    @Test
    void completionOpcodesFollowDisniNumbers() {
        assertEquals(WcOpcode.SEND, DisniMapping.opcode(IbvWC.IbvWcOpcode.IBV_WC_SEND.getOpcode()));
        assertEquals(WcOpcode.RDMA_WRITE, DisniMapping.opcode(IbvWC.IbvWcOpcode.IBV_WC_RDMA_WRITE.getOpcode()));
        assertEquals(WcOpcode.RECV, DisniMapping.opcode(IbvWC.IbvWcOpcode.IBV_WC_RECV.getOpcode()));
        assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, DisniMapping.opcode(IbvWC.IbvWcOpcode.IBV_WC_RECV_RDMA_WITH_IMM.getOpcode()));
        assertNull(DisniMapping.opcode(IbvWC.IbvWcOpcode.IBV_WC_RDMA_READ.getOpcode()), "this API posts no READs");
        assertNull(DisniMapping.opcode(IbvWC.IbvWcOpcode.IBV_WC_FETCH_ADD.getOpcode()));
    }

    @Test
    void sendOpcodesFlagsAndAccessFollowDisniConstants() {
        assertEquals(IbvSendWR.IBV_WR_SEND, DisniMapping.sendOpcode(SendOpcode.SEND));
        assertEquals(IbvSendWR.IBV_WR_SEND_WITH_IMM, DisniMapping.sendOpcode(SendOpcode.SEND_WITH_IMM));
        assertEquals(IbvSendWR.IBV_WR_RDMA_WRITE, DisniMapping.sendOpcode(SendOpcode.RDMA_WRITE));
        assertEquals(IbvSendWR.IBV_WR_RDMA_WRITE_WITH_IMM, DisniMapping.sendOpcode(SendOpcode.RDMA_WRITE_WITH_IMM));
        assertEquals(IbvSendWR.IBV_SEND_SIGNALED, DisniMapping.SEND_SIGNALED);
        assertEquals(IbvSendWR.IBV_SEND_SOLICITED, DisniMapping.SEND_SOLICITED);
        assertEquals(IbvMr.IBV_ACCESS_LOCAL_WRITE, DisniMapping.accessFlags(EnumSet.of(Access.LOCAL_WRITE)));
        assertEquals(IbvMr.IBV_ACCESS_LOCAL_WRITE | IbvMr.IBV_ACCESS_REMOTE_WRITE | IbvMr.IBV_ACCESS_REMOTE_READ,
                DisniMapping.accessFlags(EnumSet.allOf(Access.class)));
        assertEquals(0, DisniMapping.accessFlags(EnumSet.noneOf(Access.class)));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DisniMapping.accessFlags(EnumSet.of(Access.REMOTE_WRITE)));
        assertEquals("REMOTE_WRITE access requires LOCAL_WRITE (as in ibverbs)", e.getMessage());
    }

    @Test
    void connectionManagerEventsFollowDisniNumbers() {
        RdmaCmEvent.EventType[] all = RdmaCmEvent.EventType.values();
        for (int i = 0; i < all.length; i++) {
            assertEquals(all[i].name(), DisniMapping.cmEventName(i));
        }
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_RESOLVED.ordinal(), DisniMapping.CM_ADDR_RESOLVED);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_ERROR.ordinal(), DisniMapping.CM_ADDR_ERROR);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_RESOLVED.ordinal(), DisniMapping.CM_ROUTE_RESOLVED);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_ERROR.ordinal(), DisniMapping.CM_ROUTE_ERROR);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST.ordinal(), DisniMapping.CM_CONNECT_REQUEST);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_RESPONSE.ordinal(), DisniMapping.CM_CONNECT_RESPONSE);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_ERROR.ordinal(), DisniMapping.CM_CONNECT_ERROR);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_UNREACHABLE.ordinal(), DisniMapping.CM_UNREACHABLE);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED.ordinal(), DisniMapping.CM_REJECTED);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED.ordinal(), DisniMapping.CM_ESTABLISHED);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED.ordinal(), DisniMapping.CM_DISCONNECTED);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_DEVICE_REMOVAL.ordinal(), DisniMapping.CM_DEVICE_REMOVAL);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_TIMEWAIT_EXIT.ordinal(), DisniMapping.CM_TIMEWAIT_EXIT);
        assertEquals("rdma_cm_event 42", DisniMapping.cmEventName(42));
    }
}
