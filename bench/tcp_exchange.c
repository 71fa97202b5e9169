/*
 * The kernel's floor for a P = 2 all-reduce over loopback TCP: two processes, one TCP
 * connection, and in each round both sides send BYTES and receive BYTES at once (what a
 * P = 2 ring moves per all-reduce of BYTES: half in the reduce-scatter, half in the
 * all-gather, each way), with no reduction at all. One thread per process drives a
 * non-blocking socket with poll(), writing and reading CHUNK bytes per call, as Open MPI's
 * TCP transport and netreduce's polled tcp provider do. Prints
 *   bytes chunk rounds ms_per_round_median ms_min busbw_GBps_at_median
 * where busbw is BYTES / time (nccl-tests' busbw of a P = 2 all-reduce of BYTES). A fourth
 * argument sets the connection's congestion control (TCP_CONGESTION), as netreduce's tcp
 * provider does where the system's default is bbr (bench/compare.py passes the same one).
 * A fifth, "splice", sends without the kernel's copy into socket buffers: vmsplice maps each
 * CHUNK of the source into a pipe and splice moves the pipe's pages to the socket, so that
 * over loopback the receiver's read copies straight from the sender's pages (one copy per
 * byte instead of two; the source must then stay unchanged until the peer has read it,
 * which this program's never-written source does).
 *
 *   cc -O2 -o tcp_exchange tcp_exchange.c
 *   ./tcp_exchange 67108864 1048576 30 [cubic|system [splice]]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* With "splice": the pipe each CHUNK of the source passes through on its way to the socket. */
static int use_splice;
static int pipe_fd[2];

/* Moves what it can of out[queued, bytes) to the socket through the pipe; returns bytes sent. */
static size_t splice_step(int fd, char *out, size_t bytes, size_t chunk, size_t *queued, size_t *in_pipe) {
    if (*in_pipe == 0 && *queued < bytes) {
        struct iovec v = {out + *queued, bytes - *queued < chunk ? bytes - *queued : chunk};
        ssize_t w = vmsplice(pipe_fd[1], &v, 1, SPLICE_F_NONBLOCK);
        if (w > 0) { *queued += w; *in_pipe += w; }
        else if (w < 0 && errno != EAGAIN) die("vmsplice");
    }
    if (*in_pipe == 0) return 0;
    ssize_t w = splice(pipe_fd[0], NULL, fd, NULL, *in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK | SPLICE_F_MORE);
    if (w < 0 && errno != EAGAIN) die("splice");
    if (w <= 0) return 0;
    *in_pipe -= w;
    return (size_t)w;
}

/* One round: send and receive `bytes` at once, `chunk` per system call at most. */
static void exchange(int fd, char *out, char *in, size_t bytes, size_t chunk) {
    size_t sent = 0, got = 0, queued = 0, in_pipe = 0;
    while (sent < bytes || got < bytes) {
        struct pollfd p = {fd, (short)((got < bytes ? POLLIN : 0) | (sent < bytes ? POLLOUT : 0)), 0};
        if (poll(&p, 1, 1000) < 0) die("poll");
        if (got < bytes) {
            size_t want = bytes - got < chunk ? bytes - got : chunk;
            ssize_t r = read(fd, in + got, want);
            if (r > 0) got += r;
            else if (r == 0) { fprintf(stderr, "peer closed\n"); exit(1); }
            else if (errno != EAGAIN) die("read");
        }
        if (sent < bytes && use_splice) {
            sent += splice_step(fd, out, bytes, chunk, &queued, &in_pipe);
        } else if (sent < bytes) {
            size_t want = bytes - sent < chunk ? bytes - sent : chunk;
            ssize_t w = write(fd, out + sent, want);
            if (w > 0) sent += w;
            else if (w < 0 && errno != EAGAIN) die("write");
        }
    }
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s BYTES CHUNK ROUNDS [CONGESTION_CONTROL|system [splice]]\n", argv[0]);
        return 2;
    }
    size_t bytes = strtoull(argv[1], 0, 10), chunk = strtoull(argv[2], 0, 10);
    int rounds = atoi(argv[3]);
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 1)) die("bind");
    socklen_t len = sizeof a;
    getsockname(lfd, (struct sockaddr *)&a, &len);
    pid_t child = fork();
    int fd;
    if (child == 0) {
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&a, sizeof a)) die("connect");
    } else {
        fd = accept(lfd, 0, 0);
        if (fd < 0) die("accept");
    }
    close(lfd);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (argc > 4 && strcmp(argv[4], "system") != 0
        && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, argv[4], strlen(argv[4])) != 0) die("TCP_CONGESTION");
    fcntl(fd, F_SETFL, O_NONBLOCK);
    use_splice = argc > 5 && strcmp(argv[5], "splice") == 0;
    if (use_splice && (pipe(pipe_fd) != 0 || fcntl(pipe_fd[1], F_SETPIPE_SZ, (int)chunk) < 0)) die("pipe");
    char *out = aligned_alloc(4096, bytes), *in = aligned_alloc(4096, bytes);
    memset(out, 1, bytes);
    memset(in, 2, bytes);
    double *ms = calloc(rounds, sizeof *ms);
    for (int w = 0; w < 3; w++) exchange(fd, out, in, bytes, chunk); /* warm-up */
    for (int r = 0; r < rounds; r++) {
        double t0 = now_ms();
        exchange(fd, out, in, bytes, chunk);
        ms[r] = now_ms() - t0;
    }
    if (child != 0) {
        waitpid(child, 0, 0);
        qsort(ms, rounds, sizeof *ms, cmp);
        double med = ms[rounds / 2];
        printf("%zu %zu %d %.3f %.3f %.3f\n", bytes, chunk, rounds, med, ms[0], bytes / (med * 1e6));
    }
    return 0;
}
