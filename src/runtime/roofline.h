// The machine's measured ceilings, for judging kernel speed: how fast memory can be read
// and how fast the cores can multiply-add. `cohort bench --roofline` prints them and every
// "fraction of peak" in `cohort bench` divides by them.
#pragma once

#include "core/thread_pool.h"
#include "kernels/kernels.h"

namespace cohort::runtime {

struct Roofline {
  int threads = 0;          // pool size for the *_n numbers
  double read_gbps_1 = 0;   // GB/s (1e9 bytes/s) reading memory, one thread
  double read_gbps_n = 0;   // the same with every thread of the pool
  double fma_gflops_1 = 0;  // GFLOP/s (2 per multiply-add lane), one thread
  double fma_gflops_n = 0;  // the same with every thread of the pool
  const char* isa = "ref";  // the kernel table whose probes ran
};

// Measures on pool with kt's probes. Bandwidth: a streaming read-and-sum over a 256 MiB
// buffer (far beyond any cache), each thread its own contiguous slice, best of 5 passes
// (one warm-up first). FMA: register-resident chains on every thread, best of 5 runs of
// about 20 ms. Takes about a second; allocates the buffer for the duration.
Roofline measure_roofline(const kernels::KernelTable& kt, ThreadPool& pool);

}  // namespace cohort::runtime
