#include "runtime/roofline.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "core/clock.h"

namespace cohort::runtime {
namespace {

constexpr int64_t kBufferFloats = int64_t{64} << 20;  // 256 MiB
constexpr int kPasses = 5;

// Best GB/s of kPasses reads of x by nth threads of pool (nth = 1: the calling thread).
double read_gbps(const kernels::KernelTable& kt, ThreadPool& pool, const float* x, bool all) {
  std::vector<float> sums(static_cast<size_t>(pool.size()), 0.0f);
  double best = 0;
  for (int pass = 0; pass <= kPasses; ++pass) {
    const double t0 = now_s();
    if (all) {
      pool.run([&](int ith, int nth) {
        int64_t b, e;
        ThreadPool::split(kBufferFloats, ith, nth, &b, &e);
        sums[ith] += kt.read_sum(x + b, e - b);
      });
    } else {
      sums[0] += kt.read_sum(x, kBufferFloats);
    }
    const double dt = now_s() - t0;
    if (pass > 0 && dt > 0) best = std::max(best, kBufferFloats * 4.0 / dt / 1e9);
  }
  volatile float keep = 0;
  for (float s : sums) keep = keep + s;
  return best;
}

double fma_gflops(const kernels::KernelTable& kt, ThreadPool& pool, bool all) {
  // Calibrate iterations to ~20 ms on one thread.
  float sink = 0;
  int64_t iters = 1 << 16;
  for (;;) {
    const double t0 = now_s();
    kt.fma_loop(iters, &sink);
    const double dt = now_s() - t0;
    if (dt > 0.005 || iters > (int64_t{1} << 40)) {
      iters = static_cast<int64_t>(static_cast<double>(iters) * 0.02 / std::max(dt, 1e-9));
      break;
    }
    iters *= 4;
  }
  iters = std::max<int64_t>(iters, 1);
  std::vector<double> flops(static_cast<size_t>(pool.size()), 0.0);
  std::vector<float> sinks(static_cast<size_t>(pool.size()), 0.0f);
  double best = 0;
  for (int run = 0; run < kPasses; ++run) {
    const double t0 = now_s();
    double total = 0;
    if (all) {
      pool.run([&](int ith, int) { flops[ith] = kt.fma_loop(iters, &sinks[ith]); });
      for (double f : flops) total += f;
    } else {
      total = kt.fma_loop(iters, &sinks[0]);
    }
    const double dt = now_s() - t0;
    if (dt > 0) best = std::max(best, total / dt / 1e9);
  }
  volatile float keep = sink;
  for (float s : sinks) keep = keep + s;
  return best;
}

}  // namespace

Roofline measure_roofline(const kernels::KernelTable& kt, ThreadPool& pool) {
  Roofline r;
  r.threads = pool.size();
  r.isa = kt.isa;
  auto buf = std::make_unique_for_overwrite<float[]>(static_cast<size_t>(kBufferFloats));
  float* x = buf.get();
  // Touch every page on the threads that will read it (first-touch placement).
  pool.run([&](int ith, int nth) {
    int64_t b, e;
    ThreadPool::split(kBufferFloats, ith, nth, &b, &e);
    std::fill(x + b, x + e, 1.0f);
  });
  r.read_gbps_1 = read_gbps(kt, pool, x, false);
  r.read_gbps_n = read_gbps(kt, pool, x, true);
  r.fma_gflops_1 = fma_gflops(kt, pool, false);
  r.fma_gflops_n = fma_gflops(kt, pool, true);
  return r;
}

}  // namespace cohort::runtime
