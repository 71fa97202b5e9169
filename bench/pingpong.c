/*
 * Round-trip time of a small message over loopback, the kernel's floor for
 * `netreduce probe rtt`: two processes (fork), one socket pair, N ping-pongs of
 * SIZE bytes, TCP (TCP_NODELAY) or UDP, with the waiting side blocking in recv()
 * or spinning on a non-blocking one. Prints
 *   proto size mode iters p10_us median_us p90_us
 *
 *   cc -O2 -o pingpong pingpong.c
 *   ./pingpong tcp 64 10000 block
 *   ./pingpong udp 64 10000 spin
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int spin;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

/* Receives exactly n bytes (TCP) or one datagram (UDP). */
static void recv_all(int fd, char *buf, size_t n, int stream) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = recv(fd, buf + got, n - got, spin ? MSG_DONTWAIT : 0);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            continue;
        }
        if (r <= 0) {
            die("recv");
        }
        got += (size_t) r;
        if (!stream) {
            return;
        }
    }
}

static void send_all(int fd, const char *buf, size_t n) {
    size_t put = 0;
    while (put < n) {
        ssize_t w = send(fd, buf + put, n - put, 0);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            die("send");
        }
        put += (size_t) w;
    }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s tcp|udp SIZE ITERS block|spin\n", argv[0]);
        return 2;
    }
    int tcp = strcmp(argv[1], "tcp") == 0;
    size_t size = (size_t) atol(argv[2]);
    int iters = atoi(argv[3]);
    spin = strcmp(argv[4], "spin") == 0;
    int warm = iters / 10 + 100;
    char *buf = calloc(1, size);

    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    inet_pton(AF_INET, "127.0.0.2", &a.sin_addr);
    int srv = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
    int one = 1;
    setsockopt(srv, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(srv, (struct sockaddr *) &a, sizeof a) < 0) {
        die("bind");
    }
    socklen_t alen = sizeof a;
    getsockname(srv, (struct sockaddr *) &a, &alen);
    if (tcp && listen(srv, 1) < 0) {
        die("listen");
    }

    pid_t child = fork();
    if (child == 0) { /* the echo side */
        int fd = srv;
        struct sockaddr_in peer;
        socklen_t plen = sizeof peer;
        if (tcp) {
            fd = accept(srv, NULL, NULL);
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        for (int i = 0; i < warm + iters; i++) {
            if (tcp) {
                recv_all(fd, buf, size, 1);
                send_all(fd, buf, size);
            } else {
                ssize_t r;
                do {
                    r = recvfrom(fd, buf, size, spin ? MSG_DONTWAIT : 0, (struct sockaddr *) &peer, &plen);
                } while (r < 0 && (errno == EAGAIN || errno == EINTR));
                if (r < 0) {
                    die("recvfrom");
                }
                sendto(fd, buf, size, 0, (struct sockaddr *) &peer, plen);
            }
        }
        _exit(0);
    }

    struct sockaddr_in me = {.sin_family = AF_INET, .sin_port = 0};
    inet_pton(AF_INET, "127.0.0.3", &me.sin_addr);
    int fd = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
    if (bind(fd, (struct sockaddr *) &me, sizeof me) < 0) {
        die("bind client");
    }
    if (connect(fd, (struct sockaddr *) &a, sizeof a) < 0) {
        die("connect");
    }
    if (tcp) {
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    double *rtt = malloc(sizeof(double) * iters);
    for (int i = 0; i < warm + iters; i++) {
        double t0 = now_us();
        send_all(fd, buf, size);
        recv_all(fd, buf, size, tcp);
        if (i >= warm) {
            rtt[i - warm] = now_us() - t0;
        }
    }
    waitpid(child, NULL, 0);
    qsort(rtt, iters, sizeof(double), cmp);
    printf("%s %zu %s %d %.1f %.1f %.1f\n", argv[1], size, argv[4], iters, rtt[iters / 10], rtt[iters / 2],
           rtt[iters * 9 / 10]);
    return 0;
}
