/*
 * Open MPI all-reduce baseline for netreduce's benchmarks: float sum, in place, one size,
 * timed like nccl-tests (warm-up, then the mean over n iterations, averaged over ranks).
 * Inputs are small integers, so every summation order gives the exact same floats and the
 * result check is exact.
 *
 *   mpicc -O2 -o mpi_allreduce mpi_allreduce.c
 *   mpirun -np 4 ./mpi_allreduce BYTES ITERS WARMUP
 *
 * Prints one line on rank 0: ranks bytes time_us algbw_GBps busbw_GBps wrong cpu_s_per_call
 * (cpu_s_per_call: each rank process's CPU time, user + system, over the timed loop per
 * call, averaged over ranks: the same figure as netreduce bench's CPU column)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static float input_value(int rank, long i) { return (float) ((rank + 1) * (int) (i % 97) + (int) (i % 13)); }

static void fill(float *buf, long count, int rank) {
    for (long i = 0; i < count; i++) buf[i] = input_value(rank, i);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4) {
        if (rank == 0) fprintf(stderr, "usage: %s BYTES ITERS WARMUP\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long bytes = atol(argv[1]);
    int iters = atoi(argv[2]), warmup = atoi(argv[3]);
    long count = bytes / (long) sizeof(float);
    /* Cache-line aligned, as netreduce bench's tensors are (Collectives.allocateTensor). */
    float *buf = aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64);
    if (buf == NULL) MPI_Abort(MPI_COMM_WORLD, 1);

    /* Checked run first. */
    fill(buf, count, rank);
    MPI_Allreduce(MPI_IN_PLACE, buf, (int) count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    long wrong = 0;
    for (long i = 0; i < count; i++) {
        float expected = 0;
        for (int r = 0; r < size; r++) expected += input_value(r, i);
        if (buf[i] != expected) wrong++;
    }

    for (int i = 0; i < warmup; i++) MPI_Allreduce(MPI_IN_PLACE, buf, (int) count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    fill(buf, count, rank);
    MPI_Barrier(MPI_COMM_WORLD);
    double c0 = cpu_seconds();
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) MPI_Allreduce(MPI_IN_PLACE, buf, (int) count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double mine = (MPI_Wtime() - t0) / iters, sum = 0;
    double cpu = (cpu_seconds() - c0) / iters, cpu_sum = 0;
    long wrong_total = 0;
    MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&cpu, &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&wrong, &wrong_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double t = sum / size;
        double algbw = bytes / t / 1e9;
        printf("%d %ld %.1f %.3f %.3f %ld %.6f\n", size, bytes, t * 1e6, algbw, algbw * 2.0 * (size - 1) / size,
               wrong_total, cpu_sum / size);
    }
    free(buf);
    MPI_Finalize();
    return wrong_total == 0 ? 0 : 3;
}
