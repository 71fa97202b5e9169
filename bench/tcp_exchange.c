/*
 * The kernel's floor for a P = 2 all-reduce over loopback TCP: two processes, one TCP
 * connection (or one each way, "two" below), and in each round both sides send BYTES and
 * receive BYTES at once (what a P = 2 ring moves per all-reduce of BYTES: half in the
 * reduce-scatter, half in the all-gather, each way), with no reduction at all. One thread
 * per process drives its non-blocking sockets with poll(), writing and reading CHUNK bytes
 * per call, as Open MPI's TCP transport and netreduce's polled tcp provider do. Prints
 *   bytes chunk rounds ms_per_round_median ms_min busbw_GBps_at_median cpu_s_per_round ms_mean ms_p99
 * where cpu_s_per_round is each process's CPU time over the timed rounds only, per round
 * (the two processes' mean), and busbw is BYTES / time (nccl-tests' busbw of a P = 2 all-reduce of BYTES). A fourth
 * argument sets the connection's congestion control (TCP_CONGESTION), as netreduce's tcp
 * provider does where the system's default is bbr (bench/compare.py passes the same one).
 * A fifth, "splice", sends without the kernel's copy into socket buffers: vmsplice maps each
 * CHUNK of the source into a pipe and splice moves the pipe's pages to the socket, so that
 * over loopback the receiver's read copies straight from the sender's pages (one copy per
 * byte instead of two; the source must then stay unchanged until the peer has read it,
 * which this program's never-written source does).
 *
 * The fifth argument "reduce" makes each round a real P = 2 all-reduce of BYTES of floats,
 * in place: each side sends the half its peer reduces, reads the peer's copy of its own
 * half CHUNK by CHUNK into a staging CHUNK and adds it into the tensor while the staging is
 * still in cache, sends each summed CHUNK back at once, and reads the peer's summed half
 * straight into the tensor: the pipelined reduce-scatter and all-gather of netreduce's ring
 * at P = 2, without its framing, ACKs or JVM. The tensor is refilled before each round and
 * checked exact after it, outside the clock. Build it with -O3 -march=native so that the
 * sum is vectorised, as netreduce's is. In both modes the two sides meet (one byte each
 * way) before every round, so that neither times the other's refill.
 *
 * "two" (after the fifth argument, or in its place) gives each direction a connection of its
 * own, as netreduce's ring has at P = 2 (a queue pair to its right neighbour and another from
 * its left): each side writes on one and reads from the other, and poll() watches both, so
 * that the C figures can be taken over the ring's own topology as well as over one
 * connection whose TCP ACKs ride on the reverse data (docs/benchmarks.md compares the two).
 *
 * "stage=N" (with "reduce") stages the reduce-scatter in N CHUNKs taken in turn rather than
 * in one that stays in cache, as netreduce's ring stages a P = 2 call of 32 MiB and up in 16
 * (its posted receives): what staging that has gone cold costs.
 *
 *   cc -O3 -march=native -o tcp_exchange tcp_exchange.c
 *   ./tcp_exchange 67108864 1048576 30 [cubic|system [splice|reduce] [two] [stage=N]]
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
/* The mode words after the congestion control: "reduce", "two" and "stage=N" (see the top). */
static int reduce, two;
static size_t stage_chunks = 1;

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

static size_t at_most(size_t a, size_t b) {
    return a < b ? a : b;
}

/* One non-blocking read of at most n bytes: what it took, 0 if nothing was there; exits if the peer closed. */
static size_t read_some(int fd, void *to, size_t n) {
    ssize_t r = read(fd, to, n);
    if (r > 0) return (size_t)r;
    if (r == 0) { fprintf(stderr, "peer closed\n"); exit(1); }
    if (errno != EAGAIN) die("read");
    return 0;
}

/* One non-blocking write of at most n bytes: what the socket took, 0 if it had no room. */
static size_t write_some(int fd, const void *from, size_t n) {
    ssize_t w = write(fd, from, n);
    if (w >= 0) return (size_t)w;
    if (errno != EAGAIN) die("write");
    return 0;
}

/*
 * Waits until `rfd` has data (if `reading`) or `wfd` has room (if `writing`): one pollfd when
 * both directions share a connection, two when each has its own.
 */
static void await_io(int wfd, int rfd, int reading, int writing) {
    struct pollfd p[2] = {{rfd, (short)(reading ? POLLIN : 0), 0}, {wfd, (short)(writing ? POLLOUT : 0), 0}};
    if (wfd == rfd) p[0].events |= p[1].events;
    if (poll(p, wfd == rfd ? 1 : 2, 1000) < 0) die("poll");
}

/* One round: send `bytes` on wfd and receive `bytes` on rfd at once, `chunk` per system call at most. */
static void exchange(int wfd, int rfd, char *out, char *in, size_t bytes, size_t chunk) {
    size_t sent = 0, got = 0, queued = 0, in_pipe = 0;
    while (sent < bytes || got < bytes) {
        await_io(wfd, rfd, got < bytes, sent < bytes);
        if (got < bytes) got += read_some(rfd, in + got, at_most(bytes - got, chunk));
        if (sent < bytes && use_splice) {
            sent += splice_step(wfd, out, bytes, chunk, &queued, &in_pipe);
        } else if (sent < bytes) {
            sent += write_some(wfd, out + sent, at_most(bytes - sent, chunk));
        }
    }
}

/* With "reduce": the summing loop, vectorised at -O3. */
static void add_into(float *restrict dst, const float *restrict src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] += src[i];
}

/*
 * One in-place P = 2 all-reduce of `bytes` (a multiple of 8) in `tensor`. Rank 0 reduces the
 * first half, rank 1 the second. Outgoing stream: the peer's half as it is, then this rank's
 * half as it gets summed. Incoming stream: the peer's copy of this rank's half (staged and
 * added), then the peer's summed half (read into place: this rank wrote its raw copy of
 * those bytes out before the peer could have summed them).
 */
static void allreduce2(int wfd, int rfd, char *tensor, char *slots, size_t bytes, size_t chunk, int rank) {
    size_t half = bytes / 2, total = 2 * half;
    char *mine = tensor + (rank == 0 ? 0 : half), *theirs = tensor + (rank == 0 ? half : 0);
    size_t sent = 0, got = 0, staged = 0, summed = 0;
    while (sent < total || got < total) {
        char *stage = slots + (summed / chunk % stage_chunks) * chunk; /* "stage=N": the pieces in turn */
        size_t sendable = sent < half ? half - sent : summed - (sent - half);
        await_io(wfd, rfd, got < total, sendable != 0);
        if (got < half) {
            size_t piece = at_most(half - summed, chunk), r = read_some(rfd, stage + staged, piece - staged);
            got += r;
            staged += r;
            if (staged == piece) {
                add_into((float *)(mine + summed), (const float *)stage, piece / sizeof(float));
                summed += piece;
                staged = 0;
            }
        } else if (got < total) {
            got += read_some(rfd, theirs + (got - half), at_most(total - got, chunk));
        }
        sendable = sent < half ? half - sent : summed - (sent - half);
        if (sendable) sent += write_some(wfd, sent < half ? theirs + sent : mine + (sent - half), at_most(sendable, chunk));
    }
}

/* With "reduce": rank r's element i is (i % 1024) * (r + 1), so every sum is exact and 3 * (i % 1024). */
static void fill(float *t, size_t n, int rank) {
    for (size_t i = 0; i < n; i++) t[i] = (float)(i % 1024) * (rank + 1);
}

static size_t wrong(const float *t, size_t n) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += t[i] != (float)(i % 1024) * 3;
    return bad;
}

/* Both sides meet before each round, outside the clock: one byte each way. */
static void barrier(int fd) {
    char b = 'b';
    int sent = 0, got = 0;
    while (!sent || !got) {
        struct pollfd p = {fd, (short)((got ? 0 : POLLIN) | (sent ? 0 : POLLOUT)), 0};
        if (poll(&p, 1, 1000) < 0) die("poll");
        if (!sent) sent = write_some(fd, &b, 1) == 1;
        if (!got) got = read_some(fd, &b, 1) == 1;
    }
}

static double cpu_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* One connection's settings: no Nagle delay, the congestion control asked for, non-blocking. */
static void configure(int fd, const char *congestion) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (congestion && strcmp(congestion, "system") != 0
        && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, congestion, strlen(congestion)) != 0) die("TCP_CONGESTION");
    fcntl(fd, F_SETFL, O_NONBLOCK);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s BYTES CHUNK ROUNDS [CONGESTION_CONTROL|system [splice|reduce] [two] [stage=N]]\n", argv[0]);
        return 2;
    }
    size_t bytes = strtoull(argv[1], 0, 10), chunk = strtoull(argv[2], 0, 10);
    int rounds = atoi(argv[3]);
    for (int i = 5; i < argc; i++) {
        if (strcmp(argv[i], "splice") == 0) use_splice = 1;
        else if (strcmp(argv[i], "reduce") == 0) reduce = 1;
        else if (strcmp(argv[i], "two") == 0) two = 1;
        else if (strncmp(argv[i], "stage=", 6) == 0 && atoi(argv[i] + 6) > 0) stage_chunks = atoi(argv[i] + 6);
        else {
            fprintf(stderr, "unknown mode %s (splice, reduce, two, stage=N)\n", argv[i]);
            return 2;
        }
    }
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 2)) die("bind");
    socklen_t len = sizeof a;
    getsockname(lfd, (struct sockaddr *)&a, &len);
    pid_t child = fork();
    /* conn[0] carries the parent's bytes to the child; with "two", conn[1] the child's back. */
    int conn[2];
    for (int i = 0; i < 1 + two; i++) {
        if (child == 0) {
            conn[i] = socket(AF_INET, SOCK_STREAM, 0);
            if (connect(conn[i], (struct sockaddr *)&a, sizeof a)) die("connect");
        } else {
            conn[i] = accept(lfd, 0, 0);
            if (conn[i] < 0) die("accept");
        }
        configure(conn[i], argc > 4 ? argv[4] : NULL);
    }
    close(lfd);
    int fd = conn[0];
    int wfd = two && child == 0 ? conn[1] : fd, rfd = two && child != 0 ? conn[1] : fd;
    if (reduce && bytes % 8 != 0) {
        fprintf(stderr, "reduce: BYTES must be a multiple of 8\n");
        return 2;
    }
    if (use_splice && (pipe(pipe_fd) != 0 || fcntl(pipe_fd[1], F_SETPIPE_SZ, (int)chunk) < 0)) die("pipe");
    int rank = child == 0;
    size_t in_bytes = reduce ? chunk * stage_chunks : bytes; /* "reduce": the staging pieces only */
    char *out = aligned_alloc(4096, bytes), *in = aligned_alloc(4096, in_bytes);
    memset(out, 1, bytes);
    memset(in, 2, in_bytes);
    double *ms = calloc(rounds, sizeof *ms), cpu = 0;
    for (int r = -3; r < rounds; r++) { /* three untimed rounds first */
        if (reduce) fill((float *)out, bytes / sizeof(float), rank);
        barrier(fd);
        double c0 = cpu_s(), t0 = now_ms();
        if (reduce) allreduce2(wfd, rfd, out, in, bytes, chunk, rank);
        else exchange(wfd, rfd, out, in, bytes, chunk);
        double t1 = now_ms();
        if (r >= 0) {
            ms[r] = t1 - t0;
            cpu += cpu_s() - c0;
        }
        if (reduce && wrong((float *)out, bytes / sizeof(float)) != 0) {
            fprintf(stderr, "rank %d, round %d: %zu wrong elements\n", rank, r, wrong((float *)out, bytes / sizeof(float)));
            exit(1);
        }
    }
    if (child == 0) {
        if (write(fd, &cpu, sizeof cpu) != sizeof cpu) die("write cpu");
        return 0;
    }
    double peer_cpu;
    fcntl(fd, F_SETFL, 0);
    if (read(fd, &peer_cpu, sizeof peer_cpu) != sizeof peer_cpu) die("read cpu");
    int status;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
    qsort(ms, rounds, sizeof *ms, cmp);
    double med = ms[rounds / 2];
    double sum = 0;
    for (int i = 0; i < rounds; i++) sum += ms[i];
    int p99 = (rounds * 99 + 99) / 100 - 1; /* nearest rank, as netreduce bench's time_p99_us */
    printf("%zu %zu %d %.3f %.3f %.3f %.6f %.3f %.3f\n", bytes, chunk, rounds, med, ms[0], bytes / (med * 1e6),
           (cpu + peer_cpu) / 2 / rounds, sum / rounds, ms[p99 < 0 ? 0 : p99]);
    return 0;
}
