#include "runtime/roofline.h"

#include <algorithm>
#include <cstdio>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/huge_page_buffer.h"
#include "core/stats.h"

namespace cohort::runtime {
namespace {

constexpr int64_t kMinBufferFloats = int64_t{128} << 20;  // 512 MiB
constexpr int64_t kWindowFloats = int64_t{16} << 20;      // 64 MiB read per pass
// The buffer is at least this many times the last-level cache, so that the passes read
// memory, not cache. A machine seen here (Intel Xeon VM) lists a 480 MiB L3: with the old
// fixed 512 MiB buffer its probe read 30.2 / 28.6 GB/s best on 2 threads, with 2 GiB 28.9 /
// 27.8 (two runs each, alternating): some of the old passes were served by the cache.
constexpr int64_t kCacheMultiple = 4;

// Bytes of the largest CPU cache sysfs lists for cpu0 (0 when it lists none).
int64_t last_level_cache_bytes() {
  int64_t best = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string path =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size";
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (!f) continue;
    long long v = 0;
    char unit = 0;
    if (std::fscanf(f, "%lld%c", &v, &unit) >= 1) {
      const int64_t mul = unit == 'K' ? 1 << 10 : unit == 'M' ? 1 << 20 : unit == 'G' ? 1 << 30 : 1;
      best = std::max<int64_t>(best, v * mul);
    }
    std::fclose(f);
  }
  return best;
}

// Floats of the probe buffer: whole windows, >= kMinBufferFloats and kCacheMultiple x the
// last-level cache.
int64_t buffer_floats() {
  const int64_t want = std::max(kMinBufferFloats, kCacheMultiple * last_level_cache_bytes() / 4);
  return (want + kWindowFloats - 1) / kWindowFloats * kWindowFloats;
}
constexpr int kWarmupPasses = 2;
constexpr int kMinReadPasses = 24;
constexpr int kMaxReadPasses = 400;
constexpr double kReadSeconds = 0.75;  // per thread count, once the minimum passes are done
// FMA runs of ~20 ms each: at least kMinFmaPasses, then more until kFmaSeconds have passed.
// Five runs (100 ms) were too few on the Zen 4 VM of stop 29: 1 of 8 `--roofline -t 2` calls
// (3 of 12 benches) reported the 2-thread peak at the 1-thread value (117 of 233 GFLOP/s),
// with no steal time counted, as if both threads had shared one CPU for all five.
constexpr int kMinFmaPasses = 5;
constexpr int kMaxFmaPasses = 100;
constexpr double kFmaSeconds = 0.5;

struct ReadSpread {
  double best = 0, median = 0, min = 0;
  double total_gbps = 0;  // all the timed passes' bytes over their summed time
  int passes = 0;
};

// How many read passes to time: at least min_passes, then until `seconds` have passed, at
// most max_passes; after `warmup` untimed ones.
struct ReadPasses {
  int warmup = kWarmupPasses, min_passes = kMinReadPasses, max_passes = kMaxReadPasses;
  double seconds = kReadSeconds;
};

// GB/s of reads of successive windows of x (from window `first` on, wrapping) by every
// thread of pool (all) or the calling thread alone, as many passes as count says: best, median
// and slowest pass, and how many.
ReadSpread read_gbps(const kernels::KernelTable& kt, ThreadPool& pool, const float* x,
                     int64_t buffer_floats, bool all, const ReadPasses& count = {},
                     int64_t first = 0) {
  std::vector<float> sums(static_cast<size_t>(pool.size()), 0.0f);
  std::vector<double> gbps;
  double timed_s = 0;
  const int64_t kWindows = buffer_floats / kWindowFloats;
  const double start = now_s();
  for (int pass = 0; pass < count.warmup + count.max_passes; ++pass) {
    const int timed = pass - count.warmup;
    if (timed >= count.min_passes && now_s() - start > count.seconds) break;
    const float* w = x + ((first + pass) % kWindows) * kWindowFloats;
    const double t0 = now_s();
    if (all) {
      pool.run([&](int ith, int nth) {
        int64_t b, e;
        ThreadPool::split(kWindowFloats, ith, nth, &b, &e);
        sums[ith] += kt.read_sum(w + b, e - b);
      });
    } else {
      sums[0] += kt.read_sum(w, kWindowFloats);
    }
    const double dt = now_s() - t0;
    if (pass >= count.warmup && dt > 0) {
      gbps.push_back(kWindowFloats * 4.0 / dt / 1e9);
      timed_s += dt;
    }
  }
  volatile float keep = 0;
  for (float s : sums) keep = keep + s;
  ReadSpread r;
  r.passes = static_cast<int>(gbps.size());
  if (gbps.empty()) return r;
  r.min = *std::min_element(gbps.begin(), gbps.end());
  r.best = *std::max_element(gbps.begin(), gbps.end());
  r.median = median(gbps);
  r.total_gbps = static_cast<double>(gbps.size()) * kWindowFloats * 4.0 / timed_s / 1e9;
  return r;
}

// The probe's buffer in huge pages (fewer TLB misses, so page walks do not add noise to the
// reads). Without memory for it there is no measurement to make: std::bad_alloc, as any
// other allocation of the bench.
HugePageBuffer probe_buffer(int64_t floats) {
  Result<HugePageBuffer> b = HugePageBuffer::allocate(static_cast<size_t>(floats) * sizeof(float));
  if (!b.is_ok()) throw std::bad_alloc();
  return std::move(b).value();
}

// Touches every page of the probe buffer x on the thread that will read it (first-touch
// placement): within each window, the part each thread of the pool reads.
void touch_windows(ThreadPool& pool, float* x, int64_t floats) {
  pool.run([&](int ith, int nth) {
    for (int64_t w = 0; w < floats; w += kWindowFloats) {
      int64_t b, e;
      ThreadPool::split(kWindowFloats, ith, nth, &b, &e);
      std::fill(x + w + b, x + w + e, 1.0f);
    }
  });
}

// Iterations of kt's FMA loop that take about `seconds` on one thread.
int64_t fma_iterations(const kernels::KernelTable& kt, double seconds) {
  float sink = 0;
  int64_t iters = 1 << 16;
  for (;;) {
    const double t0 = now_s();
    kt.fma_loop(iters, &sink);
    const double dt = now_s() - t0;
    if (dt > 0.005 || iters > (int64_t{1} << 40)) {
      iters = static_cast<int64_t>(static_cast<double>(iters) * seconds / std::max(dt, 1e-9));
      break;
    }
    iters *= 4;
  }
  volatile float keep = sink;
  (void)keep;
  return std::max<int64_t>(iters, 1);
}

// One run of `iters` iterations of kt's FMA loop on every thread of the pool (all) or on the
// calling thread: its FLOP and its wall seconds.
std::pair<double, double> fma_run(const kernels::KernelTable& kt, ThreadPool& pool, bool all,
                                  int64_t iters) {
  std::vector<double> flops(static_cast<size_t>(pool.size()), 0.0);
  std::vector<float> sinks(static_cast<size_t>(pool.size()), 0.0f);
  const double t0 = now_s();
  double total = 0;
  if (all) {
    pool.run([&](int ith, int) { flops[ith] = kt.fma_loop(iters, &sinks[ith]); });
    for (double f : flops) total += f;
  } else {
    total = kt.fma_loop(iters, &sinks[0]);
  }
  const double dt = now_s() - t0;
  volatile float keep = 0;
  for (float s : sinks) keep = keep + s;
  return {total, dt};
}

}  // namespace

double measure_fma_gflops(const kernels::KernelTable& kt, ThreadPool& pool, bool all) {
  const int64_t iters = fma_iterations(kt, 0.02);  // runs of ~20 ms on one thread
  double best = 0;
  const double start = now_s();
  for (int run = 0; run < kMaxFmaPasses; ++run) {
    if (run >= kMinFmaPasses && now_s() - start >= kFmaSeconds) break;
    const auto [flop, dt] = fma_run(kt, pool, all, iters);
    if (dt > 0) best = std::max(best, flop / dt / 1e9);
  }
  return best;
}

double fma_gflops_over(const kernels::KernelTable& kt, ThreadPool& pool, double seconds) {
  const int64_t iters = fma_iterations(kt, 0.02);
  double flop = 0, spent = 0;
  do {
    const auto [f, dt] = fma_run(kt, pool, true, iters);
    flop += f;
    spent += dt;
  } while (spent < seconds);
  return spent > 0 ? flop / spent / 1e9 : 0;
}

ReadProbe::ReadProbe(const kernels::KernelTable& kt, ThreadPool& pool, int64_t windows)
    : kt_(kt),
      pool_(pool),
      floats_(windows > 0 ? windows * kWindowFloats : buffer_floats()),
      buffer_(probe_buffer(floats_)) {
  touch_windows(pool_, reinterpret_cast<float*>(buffer_.data()), floats_);
}

double ReadProbe::best_gbps(int passes) {
  ReadPasses n;
  n.warmup = 1;  // the first pass after other work may find its TLB entries gone
  n.min_passes = n.max_passes = std::max(passes, 1);
  n.seconds = 0;
  const ReadSpread s = read_gbps(kt_, pool_, reinterpret_cast<const float*>(buffer_.data()),
                                 floats_, true, n, next_window_);
  next_window_ += n.warmup + n.max_passes;  // the next call starts on windows not just read
  return s.best;
}

double ReadProbe::gbps_of_bytes(uint64_t bytes) {
  const uint64_t window_bytes = static_cast<uint64_t>(kWindowFloats) * sizeof(float);
  ReadPasses n;
  n.warmup = 0;
  n.min_passes = n.max_passes = static_cast<int>(
      std::clamp<uint64_t>((bytes + window_bytes - 1) / window_bytes, 1, kMaxReadPasses));
  n.seconds = 0;
  const ReadSpread s = read_gbps(kt_, pool_, reinterpret_cast<const float*>(buffer_.data()),
                                 floats_, true, n, next_window_);
  next_window_ += n.max_passes;
  return s.total_gbps;
}

Roofline measure_roofline(const kernels::KernelTable& kt, ThreadPool& pool) {
  Roofline r;
  r.threads = pool.size();
  r.isa = kt.isa;
  const int64_t floats = buffer_floats();
  HugePageBuffer buf = probe_buffer(floats);
  auto* x = reinterpret_cast<float*>(buf.data());
  touch_windows(pool, x, floats);
  const ReadSpread one = read_gbps(kt, pool, x, floats, false);
  const ReadSpread all = read_gbps(kt, pool, x, floats, true);
  r.read_gbps_1 = one.best;
  r.read_gbps_1_median = one.median;
  r.read_gbps_1_min = one.min;
  r.read_gbps_n = all.best;
  r.read_gbps_n_median = all.median;
  r.read_gbps_n_min = all.min;
  r.read_passes = std::min(one.passes, all.passes);
  r.fma_gflops_1 = measure_fma_gflops(kt, pool, false);
  r.fma_gflops_n = measure_fma_gflops(kt, pool, true);
  return r;
}

}  // namespace cohort::runtime
