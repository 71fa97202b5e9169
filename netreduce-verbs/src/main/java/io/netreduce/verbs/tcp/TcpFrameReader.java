package io.netreduce.verbs.tcp;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.Counter;
import io.netreduce.verbs.Counters;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QpState;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.IdentityHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The incoming side of a {@link TcpQueuePair}'s connection: a resumable state machine over
 * the byte stream (which part of which frame comes next, and how far into it), so that the
 * same code serves a blocking reader thread ({@link #loop}) and non-blocking pollers that
 * each read what is there ({@link #step}). Headers are dispatched as they complete: ACKs
 * and NAKs to the queue pair's requester side, requests to a posted receive (scattered
 * straight into its buffers), a registered region (an RDMA WRITE, checked by its rkey), or
 * nowhere (an RNR, access or length error, whose payload is consumed and dropped before the
 * NAK, so the stream stays in step).
 *
 * <p>Owned by one thread at a time: the reader thread, or in polled progress whichever
 * poller holds {@link #claim}. It never takes the queue pair's lock for long and never
 * writes to the socket (the queue pair's write side sends the ACKs and NAKs it asks for).
 */
final class TcpFrameReader {
    private static final Logger LOG = LoggerFactory.getLogger(TcpFrameReader.class);
    private static final int SKIP_BUFFER_BYTES = 64 * 1024;
    /** Size of the {@link #inbox}: above it, a payload's rest is read into place. */
    static final int INBOX_BYTES = 16 * 1024;
    /** Read calls per polled progress step before the write side gets its turn. */
    private static final int READ_BURST = 16;
    private static final int READ_HEADER = 0;
    private static final int READ_SCATTER = 1;
    private static final int READ_INTO_REGION = 2;
    private static final int READ_SKIP = 3;
    private static final int AFTER_SKIP_NOTHING = 0;
    private static final int AFTER_SKIP_RNR = 1;
    private static final int AFTER_SKIP_REMOTE_ACCESS = 2;
    private static final int AFTER_SKIP_LENGTH_ERROR = 3;

    private final TcpQueuePair qp;
    private final Counters counters;
    /** The responder's RNR timer, sent in RNR NAKs. */
    private final int rnrTimerMicros;
    private final AtomicBoolean claim = new AtomicBoolean();
    private final ByteBuffer readHeaderBuffer = ByteBuffer.allocateDirect(FrameHeader.LENGTH);
    /**
     * What one read took from the socket and the frames have not used yet: small frames
     * (a header, a small payload, the ACKs behind it) come in one system call and are
     * copied out of here; only the rest of a payload larger than this is read straight
     * into its destination.
     */
    private final ByteBuffer inbox = ByteBuffer.allocateDirect(INBOX_BYTES).flip();
    private final FrameHeader readHeader = new FrameHeader().wrap(readHeaderBuffer);
    /** A payload's destination buffers and then the inbox: one readv takes a payload's rest and what follows it. */
    private ByteBuffer[] readVector = new ByteBuffer[2];
    /** The last read from the socket returned less than it asked for: the socket had nothing more then. */
    private boolean drained;
    private int readPhase = READ_HEADER;
    private long readLeft;
    private TcpRecvSlot readRecv;
    private ByteBuffer readTarget;
    private int readVectorLength;
    private int afterSkip;
    private String afterSkipDetail;
    private long expectedSequence;
    private boolean discarding;
    private ByteBuffer skipBuffer;
    private final IdentityHashMap<TcpMemoryRegion, ByteBuffer> writeTargetViews = new IdentityHashMap<>();
    /** Receives completed successfully so far. Written by the owner only. */
    private long received;
    /** Payload bytes of the requests that consumed a receive, so far: a receive credit reports it. Written by the owner only. */
    private volatile long bytesTaken;
    /** Bytes read so far: progress for the queue pair's ACK timer. Written by the owner only. */
    private volatile long bytesRead;

    TcpFrameReader(TcpQueuePair qp, QpAttributes attributes) {
        this.qp = qp;
        this.counters = qp.counters();
        this.rnrTimerMicros = (int) Math.min(Integer.MAX_VALUE, Math.max(1, attributes.minRnrTimer().toNanos() / 1000));
    }

    long bytesRead() {
        return bytesRead;
    }

    /**
     * One read call on the incoming stream, and whatever it completes: a header is
     * dispatched, a payload finished, an error NAKed after its payload was skipped. The
     * reader's state (which part of which frame comes next) lives in fields, so the same
     * code serves a blocking reader thread and non-blocking pollers that each read what is
     * there. Returns the bytes read (0 only on a non-blocking channel with nothing to read).
     * Only by the thread that holds the read side (the reader thread, or {@link #claim}).
     */
    private long readOnce(SocketChannel ch) throws IOException {
        if (!inbox.hasRemaining()) {
            if (readPhase != READ_HEADER && readLeft > INBOX_BYTES) {
                return readPayloadDirect(ch);
            }
            inbox.clear();
            int r = ch.read(inbox);
            inbox.flip();
            if (r < 0) {
                throw new EOFException();
            }
            drained = r < INBOX_BYTES;
            bytesRead += r;
            if (r == 0) {
                return 0;
            }
        }
        return consumeInbox();
    }

    /**
     * A large payload's rest, read straight into its destination, and in the same readv
     * whatever follows it into the inbox: no copy for the bulk of a big message (only what
     * came into the inbox with its header is copied), and no read call of its own for the
     * next frame's header when the stream runs ahead of the reader.
     */
    private long readPayloadDirect(SocketChannel ch) throws IOException {
        int n;
        if (readPhase == READ_SCATTER) {
            n = readVectorLength;
            if (readVector.length < n + 1) {
                readVector = new ByteBuffer[n + 1]; // once per larger scatter list
            }
            System.arraycopy(readRecv.iov, 0, readVector, 0, n);
        } else if (readPhase == READ_INTO_REGION) {
            readVector[0] = readTarget;
            n = 1;
        } else {
            return skipDirect(ch);
        }
        // The destination holds exactly the payload's rest: the stream's next frames land in the inbox.
        long asked = readLeft + INBOX_BYTES;
        inbox.clear();
        readVector[n] = inbox;
        long r = ch.read(readVector, 0, n + 1);
        inbox.flip();
        if (r < 0) {
            throw new EOFException();
        }
        drained = r < asked;
        bytesRead += r;
        readLeft -= Math.min(r, readLeft);
        if (readLeft == 0) {
            payloadDone();
        }
        return r;
    }

    /** A dropped payload's rest (error and RNR paths only), read and discarded. */
    private long skipDirect(SocketChannel ch) throws IOException {
        skipBuffer.clear().limit((int) Math.min(readLeft, SKIP_BUFFER_BYTES));
        int r = ch.read(skipBuffer);
        if (r < 0) {
            throw new EOFException();
        }
        drained = skipBuffer.hasRemaining();
        bytesRead += r;
        readLeft -= r;
        if (readLeft == 0) {
            payloadDone();
        }
        return r;
    }

    /**
     * Takes the next part of the frame in progress from the inbox, and whatever it
     * completes. Returns the bytes taken (at least one: the inbox is not empty).
     */
    private long consumeInbox() throws IOException {
        int take;
        if (readPhase == READ_HEADER) {
            take = Math.min(inbox.remaining(), readHeaderBuffer.remaining());
            moveFromInbox(readHeaderBuffer, take);
            if (!readHeaderBuffer.hasRemaining()) {
                readHeaderBuffer.clear();
                onHeader();
            }
            return take;
        }
        take = (int) Math.min(inbox.remaining(), readLeft);
        switch (readPhase) {
            case READ_SCATTER: {
                int left = take;
                for (int i = 0; i < readVectorLength && left > 0; i++) {
                    ByteBuffer b = readRecv.iov[i];
                    int n = Math.min(left, b.remaining());
                    moveFromInbox(b, n);
                    left -= n;
                }
                break;
            }
            case READ_INTO_REGION:
                moveFromInbox(readTarget, take);
                break;
            default:
                inbox.position(inbox.position() + take);
                break;
        }
        readLeft -= take;
        if (readLeft == 0) {
            payloadDone();
        }
        return take;
    }

    /** Copies {@code n} bytes from the inbox into {@code to} (direct to direct: one memory copy). */
    private void moveFromInbox(ByteBuffer to, int n) {
        int limit = inbox.limit();
        inbox.limit(inbox.position() + n);
        to.put(inbox);
        inbox.limit(limit);
    }

    private void onHeader() throws IOException {
        counters.increment(Counter.PACKETS_RECEIVED);
        counters.add(Counter.BYTES_RECEIVED, FrameHeader.LENGTH);
        byte type = readHeader.type();
        if (type == FrameHeader.TYPE_ACK) {
            qp.onAck(readHeader.sequence(), readHeader.creditReceives(), readHeader.creditBytes(), readHeader.creditTaken());
        } else if (type == FrameHeader.TYPE_NAK) {
            qp.onNak(readHeader.status(), readHeader.sequence(), readHeader.aux());
        } else if (FrameHeader.isRequest(type) && readHeader.length() >= 0) {
            if (readHeader.grantsCredit()) {
                qp.grantCredit(readHeader.creditReceives(), readHeader.creditBytes(), readHeader.creditTaken());
            }
            onRequest(type);
        } else {
            counters.increment(Counter.DROP_MALFORMED);
            String what = "malformed frame from " + qp.remoteEndpoint() + ": " + FrameHeader.typeName(type)
                    + ", length " + readHeader.length();
            qp.fail(WcStatus.GENERAL_ERR, what);
            throw new IOException(what); // the stream cannot be trusted past it: close the connection
        }
    }

    /** Decides where a request's payload goes: a posted receive, a memory region, or nowhere. */
    private void onRequest(byte type) throws IOException {
        int sequence = readHeader.sequence();
        int length = readHeader.length();
        if (qp.state() != QpState.READY) {
            counters.increment(Counter.DROP_BAD_STATE);
            beginSkip(length, AFTER_SKIP_NOTHING, null);
            return;
        }
        if (sequence != (int) expectedSequence) {
            if (discarding) {
                // Requests that followed one we NAKed: the requester will send them again.
                counters.increment(Counter.DROP_OUT_OF_SEQUENCE);
                beginSkip(length, AFTER_SKIP_NOTHING, null);
                return;
            }
            throw new IOException("protocol violation: request sequence " + sequence + ", expected " + (int) expectedSequence);
        }
        discarding = false;
        boolean write = FrameHeader.isWrite(type);
        TcpMemoryRegion target = null;
        long targetAddress = readHeader.remoteAddress();
        if (write) {
            int rkey = readHeader.rkey();
            target = qp.writeTarget(rkey);
            if (target == null || !target.access().contains(Access.REMOTE_WRITE) || !target.covers(targetAddress, length)) {
                String why = target == null ? "no memory region with rkey 0x" + Integer.toHexString(rkey)
                        : !target.access().contains(Access.REMOTE_WRITE) ? "region with rkey 0x" + Integer.toHexString(rkey)
                                + " lacks REMOTE_WRITE access"
                        : "range [0x" + Long.toHexString(targetAddress) + ", +" + length + ") lies outside the region";
                beginSkip(length, AFTER_SKIP_REMOTE_ACCESS, why);
                return;
            }
        }
        TcpRecvSlot recv = null;
        if (!write || FrameHeader.hasImmediate(type)) {
            recv = qp.takeRecv();
            if (recv == null) {
                beginSkip(length, AFTER_SKIP_RNR, null);
                return;
            }
        }
        readRecv = recv; // consumed: completed by payloadDone, or flushed if the connection drops first
        if (!write && length > recv.capacity) {
            beginSkip(length, AFTER_SKIP_LENGTH_ERROR, null);
            return;
        }
        if (write) {
            ByteBuffer view = writeTargetViews.get(target);
            if (view == null) {
                view = target.newView();
                writeTargetViews.put(target, view);
            }
            int offset = (int) (targetAddress - target.address());
            view.limit(offset + length).position(offset);
            readTarget = view;
            readPhase = READ_INTO_REGION;
        } else {
            readVectorLength = recv.prepareScatter(length);
            readPhase = READ_SCATTER;
        }
        readLeft = length;
        if (length == 0) {
            payloadDone();
        }
    }

    /** Consumes and drops {@code length} payload bytes, then does {@code after} (only on error and RNR paths). */
    private void beginSkip(int length, int after, String detail) {
        if (skipBuffer == null && length > INBOX_BYTES) {
            skipBuffer = ByteBuffer.allocateDirect(SKIP_BUFFER_BYTES);
        }
        readPhase = READ_SKIP;
        readLeft = length;
        afterSkip = after;
        afterSkipDetail = detail;
        if (length == 0) {
            payloadDone();
        }
    }

    private void payloadDone() {
        int phase = readPhase;
        readPhase = READ_HEADER;
        readTarget = null;
        int sequence = readHeader.sequence();
        int length = readHeader.length();
        if (phase == READ_SKIP) {
            skipDone(sequence, length);
            return;
        }
        TcpRecvSlot recv = readRecv;
        readRecv = null;
        expectedSequence++;
        counters.increment(Counter.MESSAGES_RECEIVED);
        counters.add(Counter.BYTES_RECEIVED, length);
        // Complete the receive before acknowledging, so that by the time the sender sees its
        // completion the receiver's application can already see (and repost) this one.
        if (recv != null) {
            byte type = readHeader.type();
            boolean imm = FrameHeader.hasImmediate(type);
            received++;
            bytesTaken += length; // one owner at a time
            qp.pushRecv(recv.wrId, WcStatus.SUCCESS, FrameHeader.isWrite(type) ? WcOpcode.RECV_RDMA_WITH_IMM : WcOpcode.RECV,
                    length, imm, imm ? readHeader.immediate() : 0, null);
        }
        if ((readHeader.flags() & FrameHeader.FLAG_NO_ACK) == 0) {
            qp.acknowledge(sequence); // else its requester completed it under our receive credit
        }
    }

    /** What a dropped payload leaves to do once it is consumed: answer the requester, maybe fail. */
    private void skipDone(int sequence, int length) {
        int after = afterSkip;
        String detail = afterSkipDetail;
        afterSkip = AFTER_SKIP_NOTHING;
        afterSkipDetail = null;
        switch (after) {
            case AFTER_SKIP_RNR:
                discarding = true;
                qp.nak(FrameHeader.STATUS_RNR, sequence,
                        rnrTimerMicros);
                break;
            case AFTER_SKIP_REMOTE_ACCESS:
                qp.nak(FrameHeader.STATUS_REMOTE_ACCESS, sequence, 0);
                qp.fail(null, "remote access error on an incoming RDMA WRITE: " + detail);
                break;
            case AFTER_SKIP_LENGTH_ERROR: {
                TcpRecvSlot recv = readRecv;
                readRecv = null;
                qp.pushRecv(recv.wrId, WcStatus.LOC_LEN_ERR, WcOpcode.RECV, length, false, 0,
                        "a " + length + "-byte message does not fit the posted " + recv.capacity + "-byte receive");
                qp.nak(FrameHeader.STATUS_INVALID_REQUEST, sequence, 0);
                qp.fail(null, "local length error: " + length + "-byte message for a " + recv.capacity + "-byte receive");
                break;
            }
            default:
                break;
        }
    }

    /** The stream failed: a receive already taken for the frame in flight is flushed, not lost. */
    private void readFailed(IOException e) {
        TcpRecvSlot recv = readRecv;
        readRecv = null;
        if (recv != null) {
            qp.pushRecv(recv.wrId, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0,
                    "connection lost while receiving into this request");
        }
        qp.connectionLost("read", e);
    }

    /** Threaded progress: the reader thread, blocking in read() until the peer sends. */
    void loop(SocketChannel ch) {
        try {
            while (true) {
                readOnce(ch);
            }
        } catch (IOException e) {
            readFailed(e);
        } catch (RuntimeException e) {
            LOG.error("QP {}: reader failed", qp.qpn(), e);
            qp.fail(WcStatus.GENERAL_ERR, "internal error in the reader: " + e);
        }
    }

    /** Payload bytes of the requests that consumed a receive, so far. */
    long bytesTaken() {
        return bytesTaken;
    }

    /** Receives completed successfully so far (by whoever reads the socket). */
    long received() {
        return received;
    }

    /**
     * Polled progress: reads what the socket holds, at most {@link #READ_BURST} calls (and
     * whatever is left in the inbox) so that the write side gets its turn. False if another
     * thread holds the read side or nothing was there.
     */
    boolean step(SocketChannel ch) {
        if (!claim.compareAndSet(false, true)) {
            return false;
        }
        boolean moved = false;
        try {
            // Drain the inbox whatever the burst: bytes already read raise no readiness, so a
            // poller that went to sleep with some left would wait for the next frame.
            // A read that returned less than it asked for found the socket empty: asking again
            // at once would only cost a system call that finds nothing.
            for (int i = 0; i < READ_BURST || inbox.hasRemaining(); i++) {
                if (readOnce(ch) == 0) {
                    break;
                }
                moved = true;
                if (drained && !inbox.hasRemaining()) {
                    break;
                }
            }
        } catch (IOException e) {
            readFailed(e);
            moved = true;
        } catch (RuntimeException e) {
            LOG.error("QP {}: polled read failed", qp.qpn(), e);
            qp.fail(WcStatus.GENERAL_ERR, "internal error while reading: " + e);
            moved = true;
        } finally {
            claim.set(false);
        }
        return moved;
    }
}
