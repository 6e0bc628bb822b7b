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

  template <typename F>
  void run(F&& fn) {
    using Fn = std::remove_reference_t<F>;
    run_raw([](void* ctx, int ith, int nth) { (*static_cast<Fn*>(ctx))(ith, nth); },
            const_cast<void*>(static_cast<const void*>(&fn)));
  }

  // Splits [0, n) into nth near-equal contiguous chunks; returns chunk ith as [begin, end).
  static void split(int64_t n, int ith, int nth, int64_t* begin, int64_t* end) {
    const int64_t per = n / nth, rem = n % nth;
    *begin = ith * per + (ith < rem ? ith : rem);
    *end = *begin + per + (ith < rem ? 1 : 0);
  }

  static int hardware_threads();

 private:
  using RawFn = void (*)(void*, int, int);
  void run_raw(RawFn fn, void* ctx);
  void worker_main(int ith);

  int n_threads_;
  std::vector<std::thread> workers_;
  RawFn fn_ = nullptr;
  void* ctx_ = nullptr;
  alignas(64) std::atomic<uint32_t> generation_{0};
  alignas(64) std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace cohort
