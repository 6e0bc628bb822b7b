#include "core/thread_pool.h"

#include <immintrin.h>

#include <algorithm>

#include "core/check.h"
#include "core/clock.h"

namespace cohort {
namespace {

// About 20-50 us of spinning on these cores: longer than a typical gap between kernel
// steps in a token, far shorter than the ~100 us it costs to wake a sleeping thread.
constexpr int kSpinIterations = 1 << 14;

std::atomic<bool>& spin_pause_setting() {
  static std::atomic<bool> on{true};
  return on;
}

// Pause (unless spin_pause() is off: then only a compiler barrier), and every so often
// yield: when the machine is oversubscribed (more runnable threads than cores, as in CI
// running builds next to tests), the thread we wait for may need our core to finish.
inline void cpu_relax(int spin, bool pause) {
#if defined(__x86_64__) || defined(__i386__)
  if (pause) _mm_pause();
#endif
  if (!pause) asm volatile("" ::: "memory");
  if ((spin & 255) == 255) std::this_thread::yield();
}

// Spins before sleeping: kSpinIterations with pause, 8 times as many without (a pause takes
// tens of cycles, a bare iteration a few), so that the spin lasts about as long either way.
int spin_iterations(bool pause) { return pause ? kSpinIterations : 8 * kSpinIterations; }

}  // namespace

int ThreadPool::hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int n_threads)
    : n_threads_(n_threads <= 0 ? hardware_threads() : n_threads), shares_(n_threads_) {
  workers_.reserve(n_threads_ - 1);
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::set_timing(bool on) {
  timing_on_.store(on, std::memory_order_relaxed);
  reset_timing();
}

void ThreadPool::reset_timing() { timing_ = Timing{}; }

void ThreadPool::run_raw(RawFn fn, void* ctx) {
  if (n_threads_ == 1) {
    fn(ctx, 0, 1);
    return;
  }
  // Read once: the workers see the same value (set_timing is not called during a step).
  const bool timed = timing_on_.load(std::memory_order_relaxed);
  const int64_t fork_ns = timed ? now_ns() : 0;
  fn_ = fn;
  ctx_ = ctx;
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  fn(ctx, 0, n_threads_);
  if (timed) shares_[0].finish_ns = now_ns();
  wait_for_workers();
  if (timed) {
    const int64_t join_ns = now_ns();
    timing_.steps += 1;
    timing_.step_ns += join_ns - fork_ns;
    for (int i = 0; i < n_threads_; ++i) timing_.join_wait_ns += join_ns - shares_[i].finish_ns;
  }
}

bool ThreadPool::spin_pause() { return spin_pause_setting().load(std::memory_order_relaxed); }

void ThreadPool::set_spin_pause(bool on) {
  spin_pause_setting().store(on, std::memory_order_relaxed);
}

void ThreadPool::wait_for_workers() {
  const bool pause = spin_pause();
  for (int spin = 0, n = spin_iterations(pause); spin < n; ++spin) {
    if (pending_.load(std::memory_order_acquire) == 0) return;
    cpu_relax(spin, pause);
  }
  for (int left = pending_.load(std::memory_order_acquire); left != 0;
       left = pending_.load(std::memory_order_acquire)) {
    pending_.wait(left, std::memory_order_acquire);
  }
}

namespace {

constexpr uint64_t pack_range(uint64_t front, uint64_t end) { return front | (end << 32); }
constexpr int64_t range_front(uint64_t r) { return static_cast<int64_t>(r & 0xffffffffu); }
constexpr int64_t range_end(uint64_t r) { return static_cast<int64_t>(r >> 32); }

}  // namespace

void ThreadPool::reset_shares(int64_t n) {
  COHORT_CHECK(n >= 0 && n <= 0xffffffffLL);
  for (int i = 0; i < n_threads_; ++i) {
    int64_t b, e;
    split(n, i, n_threads_, &b, &e);
    // Relaxed: run() publishes these to the workers (generation_'s release and acquire).
    shares_[i].range.store(pack_range(b, e), std::memory_order_relaxed);
  }
}

bool ThreadPool::next_run(int ith, int64_t* begin, int64_t* end) {
  // Chunk indices are only handed out here; the fork-join orders the work itself, so the
  // compare-exchanges need no ordering of their own.
  constexpr int64_t kRunParts = 8;  // a run is this fraction of what is left of a share
  std::atomic<uint64_t>& own = shares_[ith].range;
  for (;;) {
    for (uint64_t r = own.load(std::memory_order_relaxed); range_front(r) < range_end(r);) {
      const int64_t front = range_front(r);
      const int64_t take = std::max<int64_t>(1, (range_end(r) - front) / kRunParts);
      if (own.compare_exchange_weak(r, r + static_cast<uint64_t>(take),
                                    std::memory_order_relaxed)) {
        *begin = front;
        *end = front + take;
        return true;
      }
    }
    int victim = -1;
    int64_t most = 0;
    for (int i = 0; i < n_threads_; ++i) {
      const uint64_t r = shares_[i].range.load(std::memory_order_relaxed);
      if (range_end(r) - range_front(r) > most) {
        most = range_end(r) - range_front(r);
        victim = i;
      }
    }
    if (victim < 0) return false;
    std::atomic<uint64_t>& theirs = shares_[victim].range;
    for (uint64_t r = theirs.load(std::memory_order_relaxed); range_front(r) < range_end(r);) {
      // The back half, rounded up, becomes this thread's share. Own is empty, and nothing
      // but its owner writes an empty share (a thief needs chunks left), so a store does.
      const int64_t front = range_front(r), stop = range_end(r);
      const int64_t mid = front + (stop - front) / 2;
      if (theirs.compare_exchange_weak(r, pack_range(front, mid), std::memory_order_relaxed)) {
        own.store(pack_range(mid, stop), std::memory_order_relaxed);
        break;
      }
    }
  }
}

void ThreadPool::worker_main(int ith) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t gen = generation_.load(std::memory_order_acquire);
    const bool pause = spin_pause();
    for (int spin = 0, n = spin_iterations(pause); gen == seen && spin < n; ++spin) {
      cpu_relax(spin, pause);
      gen = generation_.load(std::memory_order_acquire);
    }
    while (gen == seen) {
      generation_.wait(seen, std::memory_order_acquire);
      gen = generation_.load(std::memory_order_acquire);
    }
    seen = gen;
    if (stop_.load(std::memory_order_acquire)) return;
    fn_(ctx_, ith, n_threads_);
    if (timing_on_.load(std::memory_order_relaxed)) shares_[ith].finish_ns = now_ns();
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

}  // namespace cohort
