/*
 * Whether this CPU's `rep movsb` slows down when the destination lies a few bytes past the
 * source modulo 4096 (4K aliasing), and what that does to a loopback TCP sender, whose
 * kernel copies user bytes into its socket's pages with `rep movsb` on CPUs with FSRM.
 *
 * Part 1 copies 64 KiB blocks in user space with `rep movsb` at distances (dst - src) mod
 * 4096 of 0, 8, 16 and 64 bytes. Part 2 sends SECONDS (default 2) of 1 MiB writes over one
 * loopback TCP connection from a buffer starting at page offset 0, then at page offset
 * 4088: the kernel fills fresh socket pages from offset 0, so the second puts every copy 8
 * bytes past its source modulo 4096. Prints
 *   movsb distance GB_per_s
 *   tcp_send source_page_offset sender_cpu_s_per_GB
 * On a CPU without the effect the rows agree. Where the distance-8 rows are far slower, a
 * TCP stream whose socket pages fall so against its source is slow for as long as they do,
 * whatever the implementation (docs/benchmarks.md, "Why runs vary").
 *
 *   cc -O2 -o bench/target/copy_alias bench/copy_alias.c && bench/target/copy_alias [SECONDS]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (64 * 1024)
#define WRITE (1024 * 1024)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void movsb(void *dst, const void *src, size_t n) {
#if defined(__x86_64__)
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
#else
    memcpy(dst, src, n);
#endif
}

static void user_copies(void) {
    char *src = aligned_alloc(4096, 16 * BLOCK);
    char *dst = aligned_alloc(4096, 16 * BLOCK + 4096);
    memset(src, 1, 16 * BLOCK);
    memset(dst, 2, 16 * BLOCK + 4096);
    int distances[] = {0, 8, 16, 64};
    for (int d = 0; d < 4; d++) {
        double best = 1e9;
        for (int round = 0; round < 5; round++) {
            double t = now();
            for (int i = 0; i < 2000; i++) {
                size_t at = (size_t)(i % 16) * BLOCK;
                movsb(dst + at + distances[d], src + at, BLOCK);
            }
            t = now() - t;
            best = t < best ? t : best;
        }
        printf("movsb %d %.1f\n", distances[d], 2000.0 * BLOCK / best / 1e9);
    }
    free(src);
    free(dst);
}

/* One sender process against one reading child over loopback TCP; the sender's CPU per GB. */
static void tcp_send(int page_offset, double seconds) {
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    socklen_t len = sizeof a;
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 1) || getsockname(lfd, (struct sockaddr *)&a, &len)) {
        perror("listen");
        exit(1);
    }
    fflush(stdout); /* the child must not print what the parent buffered */
    pid_t child = fork();
    if (child == 0) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
            perror("connect");
            _exit(1);
        }
        char *in = aligned_alloc(4096, WRITE);
        while (read(fd, in, WRITE) > 0) {
        }
        _exit(0);
    }
    int fd = accept(lfd, 0, 0);
    close(lfd);
    char *base = aligned_alloc(4096, 8 * WRITE + 4096);
    memset(base, 1, 8 * WRITE + 4096);
    char *src = base + page_offset;
    double c0 = cpu_seconds(), end = now() + seconds;
    size_t sent = 0;
    for (int i = 0; now() < end; i++) {
        ssize_t w = write(fd, src + (size_t)(i % 8) * WRITE, WRITE);
        if (w <= 0) {
            perror("write");
            exit(1);
        }
        sent += (size_t)w;
        if (w != WRITE) {
            break; /* a short write moves the stream against the source: stop while the layout holds */
        }
    }
    double cpu = cpu_seconds() - c0;
    close(fd);
    waitpid(child, 0, 0);
    free(base);
    printf("tcp_send %d %.3f\n", page_offset, cpu / (sent / 1e9));
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    user_copies();
    for (int round = 0; round < 2; round++) {
        tcp_send(0, seconds);
        tcp_send(4096 - 8, seconds);
    }
    return 0;
}
