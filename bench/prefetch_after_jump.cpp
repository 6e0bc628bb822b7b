// Whether software prefetches bring in a block of weights far from the last one read, on this
// host, in 2 MiB pages and in 4 KiB pages, with 1 or 4 GiB of them. The F16 prompt product
// (kernels/x86/f16x64_prompt.h, F16NextChunk) asks for the next chunk of a panel (16 KiB,
// 256 KiB past the one it works on) a few lines per token tile while the tiles compute, so
// that the tile converting it finds it in cache.
//   build/release/bench/kernels_bench --benchmark_filter=prefetch_after_jump
//     --benchmark_repetitions=3 --benchmark_report_aggregates_only=true  (one line)
// Each iteration visits 16 KiB blocks of the buffer in a shuffled order. For each: 22 steps of
// FMA work (8 independent chains, the shape of a token tile), asking for 1/16 of the next
// block's lines in each of the first 16 (as F16NextChunk does), then a timed read of every
// line of that block. Manual time is the reads' alone: near an L2 read of 16 KiB (~0.15-0.2
// us) where the asks worked, a memory read after a jump (~1.5-2 us) where they did not.
// "load" asks with real loads: what the reads cost when the block is surely in cache.
//
// Stop 33's Firecracker VM (Zen 5), us per 16 KiB read: in 4 KiB pages the asks work with 1
// or 4 GiB (t1 0.15-0.22, loads 0.15-0.17, none 1.4-1.6); in huge pages less (t1 0.26-0.42
// with 1 GiB, 0.55-0.60 with 4; loads 0.20-0.23; none 1.6-1.9). The model's 2 GiB of packed
// F16 weights are in huge pages: there the converting tile took 4.6-5.6 times a plain tile,
// and 1.6-2.0 with THP off (docs/PERFORMANCE.md, stop 33).
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

#include "core/huge_page_buffer.h"
#include "probe_buffer.h"

namespace cohort {
namespace jump_probe {
namespace {

constexpr size_t kBlock = 16 << 10;
constexpr size_t kLine = 64;
constexpr size_t kLines = kBlock / kLine;
constexpr int kSteps = 22;     // token tiles of a 128-token prompt on one chunk
constexpr int kAskSteps = 16;  // the steps the next block is asked for in
constexpr int kStepWork = 64;  // FMA rounds (kChains each) per step
constexpr int kChains = 8;
// Floats that carry the chains and the sink between visit_blocks calls (8 a register).
constexpr int kStateFloats = 8 * (kChains + 1);

enum class Ask { kNone, kT1, kT0, kLoad };

#define COHORT_JUMP_AVX2 __attribute__((target("avx2,fma")))

bool jump_cpu_runs_avx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

COHORT_JUMP_AVX2 inline void ask_lines(Ask ask, const uint8_t* p, size_t first, size_t count,
                                       __m256* sink) {
  for (size_t l = first; l < first + count; ++l) {
    const char* line = reinterpret_cast<const char*>(p + l * kLine);
    switch (ask) {
      case Ask::kT1:
        _mm_prefetch(line, _MM_HINT_T1);
        break;
      case Ask::kT0:
        _mm_prefetch(line, _MM_HINT_T0);
        break;
      case Ask::kLoad:
        *sink = _mm256_add_ps(*sink, _mm256_load_ps(reinterpret_cast<const float*>(line)));
        break;
      case Ask::kNone:
        break;
    }
  }
}

// One block's work steps with the next block asked for; returns the seconds the read of the
// next block then took.
COHORT_JUMP_AVX2 double visit(Ask ask, const uint8_t* next, __m256* chains, __m256* sink) {
  const __m256 m = _mm256_set1_ps(0.999f), a = _mm256_set1_ps(0.001f);
  for (int step = 0; step < kSteps; ++step) {
    if (step < kAskSteps)
      ask_lines(ask, next, step * (kLines / kAskSteps), kLines / kAskSteps, sink);
    for (int r = 0; r < kStepWork; ++r) {
      for (int c = 0; c < kChains; ++c) chains[c] = _mm256_fmadd_ps(chains[c], m, a);
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  __m256 s = _mm256_setzero_ps();
  for (size_t l = 0; l < kLines; ++l) {
    s = _mm256_add_ps(s, _mm256_load_ps(reinterpret_cast<const float*>(next + l * kLine)));
  }
  _mm_lfence();
  const auto t1 = std::chrono::steady_clock::now();
  *sink = _mm256_add_ps(*sink, s);
  return std::chrono::duration<double>(t1 - t0).count();
}

// `visits` blocks from order[*at] on; the chains' and the sink's state lives in `state`
// (kStateFloats) between calls. Returns the seconds the blocks' reads took.
COHORT_JUMP_AVX2 double visit_blocks(Ask ask, const uint8_t* base,
                                     const std::vector<uint32_t>& order, size_t* at, size_t visits,
                                     float* state) {
  __m256 chains[kChains];
  for (int c = 0; c < kChains; ++c) chains[c] = _mm256_loadu_ps(state + 8 * c);
  __m256 sink = _mm256_loadu_ps(state + 8 * kChains);
  double read_s = 0;
  for (size_t v = 0; v < visits; ++v, *at = (*at + 1) % order.size()) {
    read_s += visit(ask, base + size_t{order[*at]} * kBlock, chains, &sink);
  }
  for (int c = 0; c < kChains; ++c) _mm256_storeu_ps(state + 8 * c, chains[c]);
  _mm256_storeu_ps(state + 8 * kChains, sink);
  return read_s;
}

void bm_prefetch_after_jump(benchmark::State& state, Ask ask, bool huge) {
  if (!jump_cpu_runs_avx2()) {
    state.SkipWithError("needs AVX2 and FMA");
    return;
  }
  std::optional<HugePageBuffer> buffer =
      bench::probe_buffer(state, static_cast<size_t>(state.range(0)), huge);
  if (!buffer) return;
  const size_t bytes = buffer->size();
  std::vector<uint32_t> order(bytes / kBlock);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), std::mt19937(33));
  constexpr size_t kVisits = 4096;  // 64 MiB of blocks an iteration, well past the L3
  std::vector<float> chain_state(kStateFloats, 1.0f);
  size_t at = 0;
  for (auto _ : state) {
    state.SetIterationTime(
        visit_blocks(ask, buffer->data(), order, &at, kVisits, chain_state.data()));
    benchmark::DoNotOptimize(chain_state.data());
  }
  state.counters["s_per_16KiB"] = benchmark::Counter(
      static_cast<double>(kVisits) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::kIs1000);
}

#define COHORT_PREFETCH_CASE(name, ask, huge)                \
  BENCHMARK_CAPTURE(bm_prefetch_after_jump, name, ask, huge) \
      ->UseManualTime()                                      \
      ->Unit(benchmark::kMillisecond)                        \
      ->Arg(1)                                               \
      ->Arg(4)

COHORT_PREFETCH_CASE(none_huge, Ask::kNone, true);
COHORT_PREFETCH_CASE(t1_huge, Ask::kT1, true);
COHORT_PREFETCH_CASE(t0_huge, Ask::kT0, true);
COHORT_PREFETCH_CASE(load_huge, Ask::kLoad, true);
COHORT_PREFETCH_CASE(none_4k, Ask::kNone, false);
COHORT_PREFETCH_CASE(t1_4k, Ask::kT1, false);
COHORT_PREFETCH_CASE(t0_4k, Ask::kT0, false);
COHORT_PREFETCH_CASE(load_4k, Ask::kLoad, false);

}  // namespace
}  // namespace jump_probe
}  // namespace cohort

#undef COHORT_JUMP_AVX2
#undef COHORT_PREFETCH_CASE
