// A fixed pool of compute threads for kernels. run(fn) calls fn(ith, nth) once on each of
// nth threads (the calling thread is ith 0) and returns when all have finished: a fork-join
// step with no allocation. Waiting threads spin briefly, then sleep on an atomic, so a
// token loop of many short steps does not pay a wake-up per step while the cores are warm,
// and an idle pool costs no CPU.
//
// Thread-safety: run() must be called from one thread at a time (the engine loop).
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

namespace cohort {

class ThreadPool {
 public:
  // n_threads <= 0 means one per hardware thread.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Like run(), but on the calling thread alone (fn(0, 1)) when the work is too small to
  // be worth waking the others: `units` of work, each about one multiply-add.
  template <typename F>
  void run_sized(int64_t units, F&& fn) {
    if (units < kMinParallelUnits || n_threads_ == 1) {
      fn(0, 1);
    } else {
      run(fn);
    }
  }
  // Below this many multiply-adds (~10 us of work) a fork-join costs more than it saves.
  static constexpr int64_t kMinParallelUnits = 1 << 16;

  // run_sized(units, ...) over [0, n) in split() shares: fn(begin, end) once for each
  // thread's non-empty share, [0, n) on the calling thread alone when the work is small.
  // For work whose items each take about the same time (a prompt's rows, a matrix's panels).
  template <typename F>
  void run_split(int64_t n, int64_t units, F&& fn) {
    run_sized(units, [&](int ith, int nth) {
      int64_t b, e;
      split(n, ith, nth, &b, &e);
      if (b < e) fn(b, e);
    });
  }

  template <typename F>
  void run(F&& fn) {
    using Fn = std::remove_reference_t<F>;
    run_raw([](void* ctx, int ith, int nth) { (*static_cast<Fn*>(ctx))(ith, nth); },
            const_cast<void*>(static_cast<const void*>(&fn)));
  }

  // Like run(), but hands [0, n_chunks) out in runs of chunks: fn(ith, begin, end) for runs
  // that together cover every chunk exactly once. Thread ith first works through its own
  // contiguous share (split()) front to back, taking an eighth of what is left of it (at
  // least one chunk) at a time; a thread whose share is done takes the back half of the share
  // with the most left as its own and goes on the same way. So what a thread reads stays a few
  // long ascending streams, work whose threads run at different speeds (two cores' reads from
  // memory rarely match) ends together instead of waiting on the slowest share, and a run of
  // several chunks costs one compare-exchange. Why runs, not a chunk at a time: taking each
  // 64 KiB of weights with its own compare-exchange and call cost the weight stream at every
  // chunk (a locked instruction waits for the loads before it: the likely reason); on the Zen
  // 4 VM's fast memory (55-60 GB/s on 2 threads) 1B q8_0 decode products read 73-84% of a
  // plain read so, 87-92% with 512 KiB chunks (bench/decode_layers.cpp, docs/PERFORMANCE.md
  // stop 30). Which thread runs a chunk is not fixed, so fn's results must not depend on it.
  template <typename F>
  void run_stealing_runs(int64_t n_chunks, F&& fn) {
    if (n_threads_ == 1 || n_chunks <= 1) {
      if (n_chunks > 0) fn(0, int64_t{0}, n_chunks);
      return;
    }
    reset_shares(n_chunks);
    run([&](int ith, int) {
      for (int64_t b, e; next_run(ith, &b, &e);) fn(ith, b, e);
    });
  }

  // run_stealing_runs, one fn(ith, chunk) per chunk of each run.
  template <typename F>
  void run_stealing(int64_t n_chunks, F&& fn) {
    run_stealing_runs(n_chunks, [&](int ith, int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) fn(ith, c);
    });
  }

  // Splits [0, n) into nth near-equal contiguous chunks; returns chunk ith as [begin, end).
  static void split(int64_t n, int ith, int nth, int64_t* begin, int64_t* end) {
    const int64_t per = n / nth, rem = n % nth;
    *begin = ith * per + (ith < rem ? ith : rem);
    *end = *begin + per + (ith < rem ? 1 : 0);
  }

  static int hardware_threads();

  // Whether waiting threads spin with the pause instruction (the default) or with bare loads,
  // process-wide. A diagnostic (`cohort bench --spin-pause`): on a VM, a vCPU spinning on
  // pause may be taken off its core by the hypervisor (pause-loop exiting), which may change
  // where the host runs it.
  static bool spin_pause();
  static void set_spin_pause(bool on);

  // Where the threads' time goes, counted while timing is on (set_timing) since the last
  // reset_timing(), for work made of fork-join steps such as a token's forward pass: wall
  // time inside steps (fork to join; the rest of a timed span the calling thread worked
  // alone while the others waited) and the threads' time spent waiting at joins for a
  // step's slowest part. Nothing is counted on a pool of one thread.
  struct Timing {
    int64_t steps = 0;
    int64_t step_ns = 0;       // wall, summed over steps
    int64_t join_wait_ns = 0;  // thread time: each thread's finishing its part to the join
  };
  // Off by default: when on, every step reads the clock three times (tens of ns).
  void set_timing(bool on);
  void reset_timing();
  Timing timing() const { return timing_; }

 private:
  using RawFn = void (*)(void*, int, int);
  void run_raw(RawFn fn, void* ctx);
  void worker_main(int ith);
  // Returns when every worker has finished its part of the step.
  void wait_for_workers();
  // run_stealing_runs' bookkeeping: share i of [0, n) (split()) as its next and end chunk.
  void reset_shares(int64_t n);
  // The next run [*begin, *end) for thread ith (from its own share, after taking half of
  // another's when its own is done); false when no chunk is left.
  bool next_run(int ith, int64_t* begin, int64_t* end);

  // One thread's share of a run_stealing_runs step: its front (next chunk) in the low 32 bits and
  // its end in the high 32; the owner advances the front, thieves pull in the end. On its own
  // cache line, so an owner's taking a run costs no traffic until someone steals.
  // With timing, also when thread ith finished its part of the current step: written
  // before it signals the join, read by the caller after the join.
  struct alignas(64) Share {
    std::atomic<uint64_t> range{0};
    int64_t finish_ns = 0;
  };

  int n_threads_;
  std::vector<std::thread> workers_;
  RawFn fn_ = nullptr;
  void* ctx_ = nullptr;
  alignas(64) std::atomic<uint32_t> generation_{0};
  alignas(64) std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  std::vector<Share> shares_;
  std::atomic<bool> timing_on_{false};
  Timing timing_;  // the calling thread's
};

}  // namespace cohort
