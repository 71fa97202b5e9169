/*
 * The kernel's UDP limit between two loopback addresses, the ceiling for any user-space
 * RoCEv2 over UDP: one process sends SEGMENT-byte datagrams as UDP GSO super-datagrams of
 * up to 64 segments (sendmsg + UDP_SEGMENT), the other receives them with recvmmsg and
 * UDP_GRO, for SECONDS; both are pinned to nothing and share the machine like the soft
 * provider's devices do. Without GSO/GRO (mode "plain") each datagram is one sendmmsg slot
 * and one recvmmsg slot.
 *
 *   cc -O2 -o bench/target/udp_limit bench/udp_limit.c
 *   bench/target/udp_limit 4096 gso 3       # 4 KiB segments, GSO + GRO, 3 seconds
 *
 * Prints: segment mode seconds datagrams GB_per_s Mdatagrams_per_s
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#define SLOTS 64
#define SLOT 65536

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int bound(const char *ip, int port, int gro) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    int buf = 8 << 20, one = 1;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    if (gro) setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short) port)};
    inet_pton(AF_INET, ip, &a.sin_addr);
    if (bind(fd, (struct sockaddr *) &a, sizeof a) != 0) { perror("udp_limit: bind"); exit(1); }
    return fd;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s SEGMENT gso|plain SECONDS\n", argv[0]); return 2; }
    int seg = atoi(argv[1]);
    int gso = strcmp(argv[2], "gso") == 0;
    double seconds = atof(argv[3]);
    int per = gso ? 65000 / seg : 1;
    if (per > 64) per = 64;
    int rx = bound("127.0.77.2", 47000, gso);
    int pipefd[2];
    if (pipe(pipefd) != 0) return 1;
    pid_t child = fork();
    if (child == 0) {
        close(rx);
        int tx = bound("127.0.77.1", 47001, 0);
        struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(47000)};
        inet_pton(AF_INET, "127.0.77.2", &to.sin_addr);
        char *data = calloc(1, (size_t) seg * 64);
        struct iovec iov = {.iov_base = data, .iov_len = (size_t) seg * per};
        char control[CMSG_SPACE(sizeof(unsigned short))];
        struct mmsghdr msgs[SLOTS];
        for (int i = 0; i < SLOTS; i++) {
            memset(&msgs[i], 0, sizeof msgs[i]);
            msgs[i].msg_hdr.msg_name = &to;
            msgs[i].msg_hdr.msg_namelen = sizeof to;
            msgs[i].msg_hdr.msg_iov = &iov;
            msgs[i].msg_hdr.msg_iovlen = 1;
            if (gso) {
                memset(control, 0, sizeof control);
                msgs[i].msg_hdr.msg_control = control;
                msgs[i].msg_hdr.msg_controllen = sizeof control;
                struct cmsghdr *cm = CMSG_FIRSTHDR(&msgs[i].msg_hdr);
                cm->cmsg_level = SOL_UDP;
                cm->cmsg_type = UDP_SEGMENT;
                cm->cmsg_len = CMSG_LEN(sizeof(unsigned short));
                unsigned short s = (unsigned short) seg;
                memcpy(CMSG_DATA(cm), &s, sizeof s);
            }
        }
        char go;
        if (read(pipefd[0], &go, 1) != 1) return 1;
        for (;;) {
            if (sendmmsg(tx, msgs, gso ? 4 : SLOTS, 0) < 0) { /* full: the receiver drains */ }
        }
    }
    char *buf = malloc((size_t) SLOTS * SLOT);
    struct mmsghdr msgs[SLOTS];
    struct iovec iov[SLOTS];
    char control[SLOTS][CMSG_SPACE(sizeof(int))];
    long datagrams = 0, bytes = 0;
    if (write(pipefd[1], "g", 1) != 1) return 1;
    double t0 = now(), end = t0 + seconds;
    while (now() < end) {
        for (int i = 0; i < SLOTS; i++) {
            iov[i].iov_base = buf + (size_t) i * SLOT;
            iov[i].iov_len = SLOT;
            memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_control = control[i];
            msgs[i].msg_hdr.msg_controllen = sizeof control[i];
        }
        struct timespec timeout = {0, 100000000};
        int n = recvmmsg(rx, msgs, SLOTS, MSG_WAITFORONE, &timeout);
        for (int i = 0; i < n; i++) {
            int s = (int) msgs[i].msg_len;
            for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msgs[i].msg_hdr); cm; cm = CMSG_NXTHDR(&msgs[i].msg_hdr, cm)) {
                if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) memcpy(&s, CMSG_DATA(cm), sizeof s);
            }
            bytes += msgs[i].msg_len;
            datagrams += s > 0 ? (msgs[i].msg_len + s - 1) / s : 1;
        }
    }
    double t = now() - t0;
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    printf("%d %s %.2f %ld %.3f %.3f\n", seg, gso ? "gso" : "plain", t, datagrams, bytes / t / 1e9, datagrams / t / 1e6);
    return 0;
}
