// Gloo all-reduce baseline for netreduce's benchmarks: gloo::AllreduceRing over Gloo's
// TCP transport on loopback, float sum, in place, one size, timed like nccl-tests
// (warm-up, then the mean over n iterations). Ranks meet through a FileStore directory.
// Inputs are small integers, so the exact sum is checked exactly.
//
//   g++ -O2 -std=c++17 -o gloo_allreduce gloo_allreduce.cc -lgloo -lpthread
//   ./gloo_allreduce RANK SIZE STORE_DIR BYTES ITERS WARMUP     (one process per rank)
//
// Prints one line per rank: rank size bytes time_us wrong cpu_s_per_call (this process's
// CPU time, user + system, over the timed loop per call)
#include <sys/resource.h>

#include <gloo/allreduce_ring.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

static double cpu_seconds() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static float input_value(int rank, long i) { return static_cast<float>((rank + 1) * static_cast<int>(i % 97) + static_cast<int>(i % 13)); }

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s RANK SIZE STORE_DIR BYTES ITERS WARMUP\n", argv[0]);
    return 2;
  }
  const int rank = std::atoi(argv[1]);
  const int size = std::atoi(argv[2]);
  const long bytes = std::atol(argv[4]);
  const int iters = std::atoi(argv[5]);
  const int warmup = std::atoi(argv[6]);
  const long count = bytes / static_cast<long>(sizeof(float));

  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore store(argv[3]);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->connectFullMesh(store, device);

  // Cache-line aligned, as netreduce bench's tensors are (Collectives.allocateTensor).
  std::unique_ptr<float, decltype(&std::free)> memory(
      static_cast<float*>(std::aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64)), &std::free);
  float* buf = memory.get();
  auto fill = [&] { for (long i = 0; i < count; i++) buf[i] = input_value(rank, i); };
  std::vector<float*> ptrs{buf};
  gloo::AllreduceRing<float> allreduce(context, ptrs, static_cast<int>(count));
  gloo::BarrierAllToAll barrier(context);

  fill();
  allreduce.run();
  long wrong = 0;
  for (long i = 0; i < count; i++) {
    float expected = 0;
    for (int r = 0; r < size; r++) expected += input_value(r, i);
    if (buf[i] != expected) wrong++;
  }
  for (int i = 0; i < warmup; i++) allreduce.run();
  fill();
  barrier.run();
  const double c0 = cpu_seconds();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; i++) allreduce.run();
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
  const double cpu = (cpu_seconds() - c0) / iters;
  barrier.run();
  std::printf("%d %d %ld %.1f %ld %.6f\n", rank, size, bytes, us, wrong, cpu);
  return wrong == 0 ? 0 : 3;
}
