/*
 * Plays P ranks' crafted RoCEv2 streams against a NetReduce switch (the file written by
 * io.netreduce.netswitch.bench.SwitchLoad): each rank has its own socket on its own
 * loopback address, keeps `window` messages in flight (message m goes once result m - N has
 * fully arrived), sends each message's packets as one UDP GSO batch, and receives results
 * with recvmmsg and UDP GRO. No ACKs: the switch aggregates without them.
 *
 *   cc -O2 -o bench/target/switch_load bench/switch_load.c
 *   bench/target/switch_load STREAM_FILE
 *
 * Prints: ranks messages packets_sent packets_received seconds kpkt_per_s_in cpu_s
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#define MAX_RANKS 64
#define RX_SLOTS 32
#define RX_SLOT 65536

struct rank {
    int fd;
    struct sockaddr_in self;
    uint8_t **packet;    /* every datagram of the stream, in order */
    uint32_t *length;
    long sent, received;
};

static int32_t read_int(FILE *f) {
    int32_t v;
    if (fread(&v, 4, 1, f) != 1) { fprintf(stderr, "switch_load: truncated stream file\n"); exit(2); }
    return v; /* little-endian file, little-endian host */
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Sends packets [from, to) of rank r, as GSO batches of equal-length runs; returns how many went. */
static long send_run(struct rank *k, long from, long to, struct sockaddr_in *sw) {
    long at = from;
    while (at < to) {
        uint32_t seg = k->length[at];
        struct iovec iov[64];
        int n = 0;
        size_t bytes = 0;
        while (at + n < to && n < 64 && k->length[at + n] == seg && bytes + seg <= 65000) {
            iov[n].iov_base = k->packet[at + n];
            iov[n].iov_len = seg;
            bytes += seg;
            n++;
        }
        char control[CMSG_SPACE(sizeof(uint16_t))];
        struct msghdr h = {.msg_name = sw, .msg_namelen = sizeof *sw, .msg_iov = iov, .msg_iovlen = n};
        if (n > 1) {
            memset(control, 0, sizeof control);
            h.msg_control = control;
            h.msg_controllen = sizeof control;
            struct cmsghdr *cm = CMSG_FIRSTHDR(&h);
            cm->cmsg_level = SOL_UDP;
            cm->cmsg_type = UDP_SEGMENT;
            cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
            uint16_t s = (uint16_t) seg;
            memcpy(CMSG_DATA(cm), &s, sizeof s);
        }
        if (sendmsg(k->fd, &h, 0) < 0) {
            if (errno == EAGAIN || errno == ENOBUFS) break;
            perror("switch_load: sendmsg");
            exit(1);
        }
        at += n;
    }
    return at - from;
}

/* Receives what is there for rank r (non-blocking); returns result packets counted. */
static long receive(struct rank *k, uint8_t *buf) {
    struct mmsghdr msgs[RX_SLOTS];
    struct iovec iov[RX_SLOTS];
    char control[RX_SLOTS][CMSG_SPACE(sizeof(int))];
    for (int i = 0; i < RX_SLOTS; i++) {
        iov[i].iov_base = buf + (size_t) i * RX_SLOT;
        iov[i].iov_len = RX_SLOT;
        memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_control = control[i];
        msgs[i].msg_hdr.msg_controllen = sizeof control[i];
    }
    int n = recvmmsg(k->fd, msgs, RX_SLOTS, MSG_DONTWAIT, NULL);
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) return 0;
        perror("switch_load: recvmmsg");
        exit(1);
    }
    long packets = 0;
    for (int i = 0; i < n; i++) {
        int seg = (int) msgs[i].msg_len;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msgs[i].msg_hdr); cm; cm = CMSG_NXTHDR(&msgs[i].msg_hdr, cm)) {
            if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) {
                memcpy(&seg, CMSG_DATA(cm), sizeof seg);
            }
        }
        packets += seg > 0 ? ((long) msgs[i].msg_len + seg - 1) / seg : 1;
    }
    return packets;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s STREAM_FILE\n", argv[0]); return 2; }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 2; }
    int p = read_int(f), messages = read_int(f), per_message = read_int(f), window = read_int(f);
    uint32_t sip = (uint32_t) read_int(f);
    int sport = read_int(f);
    if (p < 1 || p > MAX_RANKS) { fprintf(stderr, "switch_load: bad rank count %d\n", p); return 2; }
    struct sockaddr_in sw = {.sin_family = AF_INET, .sin_port = htons((uint16_t) sport), .sin_addr.s_addr = htonl(sip)};
    struct rank ranks[MAX_RANKS];
    long total = (long) messages * per_message;
    for (int r = 0; r < p; r++) {
        uint32_t ip = (uint32_t) read_int(f);
        int port = read_int(f);
        struct rank *k = &ranks[r];
        memset(k, 0, sizeof *k);
        k->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
        int one = 1, buf = 8 << 20;
        setsockopt(k->fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
        setsockopt(k->fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
        setsockopt(k->fd, SOL_UDP, UDP_GRO, &one, sizeof one);
        k->self.sin_family = AF_INET;
        k->self.sin_port = htons((uint16_t) port);
        k->self.sin_addr.s_addr = htonl(ip);
        if (bind(k->fd, (struct sockaddr *) &k->self, sizeof k->self) != 0) { perror("switch_load: bind"); return 1; }
        k->packet = malloc(sizeof(uint8_t *) * total);
        k->length = malloc(sizeof(uint32_t) * total);
    }
    for (int r = 0; r < p; r++) {
        for (long i = 0; i < total; i++) {
            uint32_t len = (uint32_t) read_int(f);
            ranks[r].length[i] = len;
            ranks[r].packet[i] = malloc(len);
            if (fread(ranks[r].packet[i], 1, len, f) != len) { fprintf(stderr, "switch_load: truncated\n"); return 2; }
        }
    }
    fclose(f);
    uint8_t *rx = malloc((size_t) RX_SLOTS * RX_SLOT);
    struct rusage u0, u1;
    getrusage(RUSAGE_SELF, &u0);
    double t0 = now(), deadline = t0 + 120;
    int done = 0;
    long idle = 0;
    while (!done && now() < deadline) {
        done = 1;
        int moved = 0;
        for (int r = 0; r < p; r++) {
            struct rank *k = &ranks[r];
            long allowed = (k->received / per_message + window) * (long) per_message;
            if (allowed > total) allowed = total;
            if (k->sent < allowed) {
                long s = send_run(k, k->sent, allowed, &sw);
                k->sent += s;
                moved |= s > 0;
            }
            long got = receive(k, rx);
            k->received += got;
            moved |= got > 0;
            done &= k->received >= total;
        }
        if (!moved && !done) {
            /* Nothing to do: wait for any socket to have results. */
            struct pollfd pf[MAX_RANKS];
            for (int r = 0; r < p; r++) { pf[r].fd = ranks[r].fd; pf[r].events = POLLIN; }
            poll(pf, p, 10);
            idle++;
        }
    }
    double seconds = now() - t0;
    getrusage(RUSAGE_SELF, &u1);
    double cpu = (u1.ru_utime.tv_sec - u0.ru_utime.tv_sec) + (u1.ru_utime.tv_usec - u0.ru_utime.tv_usec) / 1e6
                 + (u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) + (u1.ru_stime.tv_usec - u0.ru_stime.tv_usec) / 1e6;
    long sent = 0, received = 0;
    for (int r = 0; r < p; r++) { sent += ranks[r].sent; received += ranks[r].received; }
    printf("load generator: %d ranks, %d messages of %d packets each: %ld packets sent, %ld results received in "
           "%.3f s (%.0f kpkt/s sent), its own CPU %.3f s%s\n", p, messages, per_message, sent, received, seconds,
           sent / seconds / 1e3, cpu, done ? "" : " STALLED");
    return done ? 0 : 3;
}
