/*
 * Batched UDP I/O for the JVM: recvmmsg with UDP GRO and sendmmsg with UDP GSO straight
 * from and into direct buffers, for io.netreduce.wire.udp.NativeUdp. No allocation, no
 * copy: the kernel reads and writes the Java buffers through iovecs.
 *
 * Receive metadata, per message, 4 ints: payload length, source IPv4 (host order), source
 * port, segment size (GRO's gso_size, or the length when the kernel did not coalesce).
 * Send plan, per run: ip, port, segment size, the run's datagram count d, the iovec count n,
 * then n iovecs of (address low 32 bits, address high 32 bits, length) in direct memory the
 * caller keeps alive for the call: the run's bytes are the iovecs in order, and a run of
 * d > 1 leaves as one GSO super-datagram cut every segment size bytes, so that a packet's
 * headers, its payload in registered memory and its ICRC can each be an iovec of their own.
 * A waker (an eventfd) lets one thread end another's wait for a socket (awaitReadable0).
 *
 * Sockets block, and every call that must not wait says so (MSG_DONTWAIT): a receive that
 * finds nothing and may wait then sleeps in recvmmsg itself, bounded by the socket's
 * SO_RCVTIMEO, instead of in poll() followed by a second recvmmsg. The switch's data plane
 * waits that way once per burst; the poll() and its extra system call cost 3-7 % of its CPU
 * per packet (docs/benchmarks.md, "Software switch").
 */
#define _GNU_SOURCE
#include <jni.h>
#include <errno.h>
#include <sys/time.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif

#define MAX_MSGS 256
#define MAX_IOVS 8192
#define CMSG_SPACE_INT CMSG_SPACE(sizeof(int))

static int fail(void) { return -errno; }

/*
 * The receive timeout (SO_RCVTIMEO) each socket opened here has now, in ms (0: none), so
 * that a waiting receive sets it only when its timeout differs from the last one. Indexed by
 * descriptor; open0 and close0 reset an entry, so a reused descriptor never inherits one.
 * Descriptors past the table wait in poll() instead. Racy only between two threads that
 * wait on one socket with different timeouts: each wait is still bounded by one of them.
 */
#define WAIT_TABLE 4096
static int receiveWait[WAIT_TABLE];

static void forgetWait(int fd) {
    if (fd >= 0 && fd < WAIT_TABLE) receiveWait[fd] = 0;
}

/* Sets fd's SO_RCVTIMEO to timeoutMillis unless it has it: 0, or -errno. */
static int receiveTimeout(int fd, int timeoutMillis) {
    if (receiveWait[fd] == timeoutMillis) return 0;
    struct timeval tv = {.tv_sec = timeoutMillis / 1000, .tv_usec = (timeoutMillis % 1000) * 1000};
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) return fail();
    receiveWait[fd] = timeoutMillis;
    return 0;
}

JNIEXPORT jint JNICALL Java_io_netreduce_wire_udp_NativeUdp_open0(JNIEnv *env, jclass c, jint ip, jint port,
                                                                  jint rcvbuf, jint sndbuf, jboolean gro) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail();
    forgetWait(fd);
    int one = 1;
    if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    if (sndbuf > 0) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    if (gro && setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof one) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t) port);
    a.sin_addr.s_addr = htonl((uint32_t) ip);
    if (bind(fd, (struct sockaddr *) &a, sizeof a) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

/*
 * Asks for a receive buffer of `bytes` past net.core.rmem_max where the process may
 * (SO_RCVBUFFORCE needs CAP_NET_ADMIN), else up to rmem_max: the size the kernel reports
 * afterwards (twice what it granted, as it counts its bookkeeping), or -errno.
 */
JNIEXPORT jint JNICALL Java_io_netreduce_wire_udp_NativeUdp_growReceiveBuffer0(JNIEnv *env, jclass c, jint fd,
                                                                              jint bytes) {
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0
        && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes) != 0) return fail();
    int granted = 0;
    socklen_t length = sizeof granted;
    if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &length) != 0) return fail();
    return granted;
}

JNIEXPORT jint JNICALL Java_io_netreduce_wire_udp_NativeUdp_localPort0(JNIEnv *env, jclass c, jint fd) {
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    if (getsockname(fd, (struct sockaddr *) &a, &len) != 0) return fail();
    return ntohs(a.sin_port);
}

JNIEXPORT jint JNICALL Java_io_netreduce_wire_udp_NativeUdp_close0(JNIEnv *env, jclass c, jint fd) {
    forgetWait(fd);
    return close(fd) == 0 ? 0 : fail();
}

/* Waits up to timeoutMillis for fd to become readable (events POLLIN) or writable (POLLOUT): 1, 0 on timeout, -errno. */
static int await(int fd, short events, int timeoutMillis) {
    struct pollfd p = {.fd = fd, .events = events};
    int r = poll(&p, 1, timeoutMillis);
    if (r < 0) return errno == EINTR ? 0 : -errno;
    return r;
}

JNIEXPORT jint JNICALL Java_io_netreduce_wire_udp_NativeUdp_receive0(JNIEnv *env, jclass c, jint fd, jobject buffer,
                                                                     jint slotBytes, jint slots, jobject meta,
                                                                     jint timeoutMillis) {
    char *base = (*env)->GetDirectBufferAddress(env, buffer);
    int32_t *m = (*env)->GetDirectBufferAddress(env, meta);
    if (base == NULL || m == NULL) return -EINVAL;
    if (slots > MAX_MSGS) slots = MAX_MSGS;
    struct mmsghdr msgs[MAX_MSGS];
    struct iovec iov[MAX_MSGS];
    struct sockaddr_in from[MAX_MSGS];
    char control[MAX_MSGS][CMSG_SPACE_INT];
    for (int i = 0; i < slots; i++) {
        iov[i].iov_base = base + (size_t) i * slotBytes;
        iov[i].iov_len = slotBytes;
        memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = &from[i];
        msgs[i].msg_hdr.msg_namelen = sizeof from[i];
        msgs[i].msg_hdr.msg_control = control[i];
        msgs[i].msg_hdr.msg_controllen = sizeof control[i];
    }
    int n = recvmmsg(fd, msgs, slots, MSG_DONTWAIT, NULL);
    if (n < 0 && errno == EAGAIN && timeoutMillis > 0) {
        if (fd < WAIT_TABLE) {
            int r = receiveTimeout(fd, timeoutMillis);
            if (r < 0) return r;
            /* Sleeps until the first datagram (or the timeout: EAGAIN), then takes what else is there. */
            n = recvmmsg(fd, msgs, slots, MSG_WAITFORONE, NULL);
        } else {
            int r = await(fd, POLLIN, timeoutMillis);
            if (r <= 0) return r;
            n = recvmmsg(fd, msgs, slots, MSG_DONTWAIT, NULL);
        }
    }
    if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -errno;
    for (int i = 0; i < n; i++) {
        int len = (int) msgs[i].msg_len;
        int segment = len;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msgs[i].msg_hdr); cm != NULL;
             cm = CMSG_NXTHDR(&msgs[i].msg_hdr, cm)) {
            if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) {
                int s;
                memcpy(&s, CMSG_DATA(cm), sizeof s);
                if (s > 0) segment = s;
            }
        }
        m[4 * i] = (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) ? -len : len;
        m[4 * i + 1] = (int32_t) ntohl(from[i].sin_addr.s_addr);
        m[4 * i + 2] = ntohs(from[i].sin_port);
        m[4 * i + 3] = segment;
    }
    return n;
}

JNIEXPORT jlong JNICALL Java_io_netreduce_wire_udp_NativeUdp_address0(JNIEnv *env, jclass c, jobject buffer) {
    return (jlong) (intptr_t) (*env)->GetDirectBufferAddress(env, buffer);
}

JNIEXPORT jint JNICALL Java_io_netreduce_wire_udp_NativeUdp_send0(JNIEnv *env, jclass c, jint fd, jobject plan,
                                                                  jint runs, jint timeoutMillis) {
    int32_t *p = (*env)->GetDirectBufferAddress(env, plan);
    if (p == NULL) return -EINVAL;
    static __thread struct mmsghdr msgs[MAX_MSGS];
    static __thread struct iovec iov[MAX_IOVS];
    static __thread struct sockaddr_in to[MAX_MSGS];
    static __thread char control[MAX_MSGS][CMSG_SPACE_INT];
    int sentRuns = 0;
    int at = 0;
    while (sentRuns < runs) {
        int count = 0, iovs = 0, cursor = at;
        for (int r = sentRuns; r < runs && count < MAX_MSGS; r++) {
            int datagrams = p[cursor + 3];
            int n = p[cursor + 4];
            if (n > UIO_MAXIOV || n < 1) return sentRuns > 0 ? sentRuns : -EINVAL;
            if (iovs + n > MAX_IOVS) break;
            struct msghdr *h = &msgs[count].msg_hdr;
            memset(h, 0, sizeof *h);
            memset(&to[count], 0, sizeof to[count]);
            to[count].sin_family = AF_INET;
            to[count].sin_addr.s_addr = htonl((uint32_t) p[cursor]);
            to[count].sin_port = htons((uint16_t) p[cursor + 1]);
            h->msg_name = &to[count];
            h->msg_namelen = sizeof to[count];
            h->msg_iov = &iov[iovs];
            h->msg_iovlen = n;
            for (int k = 0; k < n; k++) {
                const int32_t *e = &p[cursor + 5 + 3 * k];
                uint64_t address = (uint64_t) (uint32_t) e[0] | (uint64_t) (uint32_t) e[1] << 32;
                iov[iovs + k].iov_base = (void *) (uintptr_t) address;
                iov[iovs + k].iov_len = (size_t) e[2];
            }
            int segment = p[cursor + 2];
            if (datagrams > 1 && segment > 0) {
                h->msg_control = control[count];
                h->msg_controllen = CMSG_SPACE_INT;
                struct cmsghdr *cm = CMSG_FIRSTHDR(h);
                cm->cmsg_level = SOL_UDP;
                cm->cmsg_type = UDP_SEGMENT;
                cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
                uint16_t s = (uint16_t) segment;
                memcpy(CMSG_DATA(cm), &s, sizeof s);
                h->msg_controllen = CMSG_SPACE(sizeof(uint16_t));
            }
            iovs += n;
            cursor += 5 + 3 * n;
            count++;
        }
        int done = 0;
        while (done < count) {
            int s = sendmmsg(fd, msgs + done, count - done, MSG_DONTWAIT);
            if (s < 0) {
                if (errno == EINTR) continue;
                if (errno == EAGAIN || errno == ENOBUFS) {
                    int r = await(fd, POLLOUT, timeoutMillis);
                    if (r > 0) continue;
                    return sentRuns + done; /* the socket stayed full: the caller counts the rest as dropped */
                }
                return sentRuns + done > 0 ? sentRuns + done : -errno;
            }
            done += s;
        }
        for (int k = 0; k < count; k++) {
            at += 5 + 3 * p[at + 4];
        }
        sentRuns += count;
    }
    return sentRuns;
}

JNIEXPORT jstring JNICALL Java_io_netreduce_wire_udp_NativeUdp_strerror0(JNIEnv *env, jclass c, jint e) {
    return (*env)->NewStringUTF(env, strerror(e));
}

JNIEXPORT jint JNICALL Java_io_netreduce_wire_udp_NativeUdp_waker0(JNIEnv *env, jclass c) {
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return fd < 0 ? fail() : fd;
}

JNIEXPORT jint JNICALL Java_io_netreduce_wire_udp_NativeUdp_wake0(JNIEnv *env, jclass c, jint waker) {
    uint64_t one = 1;
    return write(waker, &one, sizeof one) == (ssize_t) sizeof one || errno == EAGAIN ? 0 : fail();
}

/* Waits up to timeoutMillis until fd is readable or waker was woken (then resets it): 1, 0 on timeout, -errno. */
JNIEXPORT jint JNICALL Java_io_netreduce_wire_udp_NativeUdp_awaitReadable0(JNIEnv *env, jclass c, jint fd, jint waker,
                                                                           jint timeoutMillis) {
    struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = waker, .events = POLLIN}};
    int r = poll(p, 2, timeoutMillis);
    if (r < 0) return errno == EINTR ? 0 : -errno;
    if (p[1].revents & POLLIN) {
        uint64_t count;
        if (read(waker, &count, sizeof count) < 0 && errno != EAGAIN) return fail();
    }
    return r > 0 ? 1 : 0;
}
