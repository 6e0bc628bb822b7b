// The machine's measured ceilings, for judging kernel speed: how fast memory can be read
// and how fast the cores can multiply-add. `cohort bench --roofline` prints them and every
// "fraction of peak" in `cohort bench` divides by them.
#pragma once

#include "core/huge_page_buffer.h"
#include "core/thread_pool.h"
#include "kernels/kernels.h"

namespace cohort::runtime {

struct Roofline {
  int threads = 0;          // pool size for the *_n numbers
  double read_gbps_1 = 0;   // GB/s (1e9 bytes/s) reading memory, one thread: the best pass
  double read_gbps_n = 0;   // the same with every thread of the pool
  double fma_gflops_1 = 0;  // GFLOP/s (2 per multiply-add lane), one thread
  double fma_gflops_n = 0;  // the same with every thread of the pool
  const char* isa = "ref";  // the kernel table whose probes ran
  // Where a test's roofline names in `isa` the kernels that ran the test (cmd_bench): the
  // table whose probes measured it (`--probes`), else null (the same as isa).
  const char* probes_isa = nullptr;
  // The spread of the read passes behind read_gbps_1 / read_gbps_n (the best): their median
  // and their slowest. On a quiet machine the three agree within a few percent; a median
  // far below the best says other work shared the cores or the memory bus meanwhile.
  double read_gbps_1_median = 0, read_gbps_1_min = 0;
  double read_gbps_n_median = 0, read_gbps_n_min = 0;
  int read_passes = 0;  // timed read passes per thread count (the fewer of the two)
};

// Measures on pool with kt's probes. Bandwidth: a streaming read-and-sum over windows of a
// buffer of 512 MiB or 4x the last-level cache, whichever is larger (beyond the cache:
// transparent huge pages asked for, every page
// touched first by the thread that reads it), each thread its own contiguous part of the
// window. After two warm-up passes, timed passes of 64 MiB each, every pass a different
// window so nothing of it is left in the last-level cache, at least 24 and until 0.75 s
// have passed (at most 400), on one thread and then on all: short passes are more often
// spared a preemption on a loaded machine, and many of them give the best more chances.
// FMA: register-resident chains on every thread, best of runs of about 20 ms (at least 5, until
// 0.5 s on each thread count). Takes about three seconds; allocates the buffer for the duration.
Roofline measure_roofline(const kernels::KernelTable& kt, ThreadPool& pool);

// The roofline's FMA peak alone, on every thread of the pool (or on the calling thread only),
// in GFLOP/s: for a second measurement after other work (cohort bench takes the better of
// the two for its pp rows).
double measure_fma_gflops(const kernels::KernelTable& kt, ThreadPool& pool, bool all);

// GFLOP/s of the roofline's FMA chains on every thread of the pool run for about `seconds`
// (runs of ~20 ms until that much time has passed): the rate over the whole span, not its
// best run, i.e. what the cores sustained in those seconds. cohort bench --paired runs it
// right after each prompt repetition, as long as the repetition took, to judge it against
// the FMA rate of its own moment (a shared VM's cores run at different speeds from minute to
// minute, and the best ~20 ms run of a probe made earlier may have caught a faster one).
double fma_gflops_over(const kernels::KernelTable& kt, ThreadPool& pool, double seconds);

// The roofline's read probe (the same buffer, windows, first touch and kt's read) kept at
// hand, to run next to another measurement: on a host whose memory speed moves from minute
// to minute (a shared VM), a fraction of bandwidth means something only against reads made
// at the same time. Allocates the buffer for its lifetime.
class ReadProbe {
 public:
  // windows > 0: a buffer of that many 64 MiB windows instead (a test's small probe; a
  // buffer within the last-level cache reads the cache, not memory).
  ReadProbe(const kernels::KernelTable& kt, ThreadPool& pool, int64_t windows = 0);
  // The best GB/s of `passes` passes (64 MiB each) on every thread of the pool: about 1 ms
  // a pass at 60 GB/s.
  double best_gbps(int passes);
  // GB/s of one timed read of at least `bytes` (whole 64 MiB windows, at least one; after
  // the buffer's end it wraps to its start, which is beyond the last-level cache again) on
  // every thread of the pool, with no warm-up pass: a plain read of what another piece of
  // work just read (a token's weights), to compare with it.
  double gbps_of_bytes(uint64_t bytes);

 private:
  const kernels::KernelTable& kt_;
  ThreadPool& pool_;
  int64_t floats_ = 0;
  HugePageBuffer buffer_;
  int64_t next_window_ = 0;
};

}  // namespace cohort::runtime
