// How the order of a one-token product's reads changes what one thread streams from memory:
// the same 1 GiB (in huge pages, far beyond the caches) read as one stream or as 4 panels
// walked together, with no arithmetic (sums of loads) or with F16 decode's (vcvtph2ps + FMA
// into 8 independent chains). Stop 22 found that on its Zen 4 VM 4 streams per thread lose
// ~10% even without arithmetic, and chose the F16x64 layout (one stream) from this.
//   build/release/bench/kernels_bench --benchmark_filter=read_pattern
//     --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true  (one line)
// Compare the variants within one run, interleaved: on a shared machine the bandwidth moves
// from minute to minute.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "core/huge_page_buffer.h"

namespace cohort {
namespace {

constexpr size_t kBufferBytes = size_t{1} << 30;
constexpr int64_t kPanelCols = 2048;                     // a 1B-shape row
constexpr int64_t kColBytes = 32;                        // 16 halves: one column of a 16-row panel
constexpr int64_t kPanelBytes = kPanelCols * kColBytes;  // 64 KiB
constexpr int kPanels = 4;

#define COHORT_AVX2 __attribute__((target("avx2,fma,f16c")))

bool cpu_runs_avx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("f16c");
}

COHORT_AVX2 inline __m256 halves8(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

COHORT_AVX2 inline float lane0(__m256 v) { return _mm256_cvtss_f32(v); }

// One stream, sums of loads (what the roofline probe does).
COHORT_AVX2 float plain_stream(const uint8_t* p, size_t bytes, const float*) {
  __m256 s[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                 _mm256_setzero_ps()};
  for (size_t i = 0; i + 128 <= bytes; i += 128) {
    for (int j = 0; j < 4; ++j) {
      s[j] = _mm256_add_ps(s[j], _mm256_loadu_ps(reinterpret_cast<const float*>(p + i) + 8 * j));
    }
  }
  return lane0(_mm256_add_ps(_mm256_add_ps(s[0], s[1]), _mm256_add_ps(s[2], s[3])));
}

// Blocks of 4 panels, each walked a column at a time, all 4 together: 4 streams. With
// kF16 the columns are converted and multiplied (the F16x16 decode before stop 22), else
// summed.
template <bool kF16>
COHORT_AVX2 float four_panels(const uint8_t* p, size_t bytes, const float* a) {
  __m256 lo[kPanels], hi[kPanels];
  for (int q = 0; q < kPanels; ++q) lo[q] = hi[q] = _mm256_setzero_ps();
  for (size_t b = 0; b + kPanels * kPanelBytes <= bytes; b += kPanels * kPanelBytes) {
    const uint8_t* w = p + b;
    for (int64_t k = 0; k < kPanelCols; ++k) {
      const __m256 ak = _mm256_broadcast_ss(a + k);
      for (int q = 0; q < kPanels; ++q) {
        const uint8_t* col = w + q * kPanelBytes + k * kColBytes;
        if constexpr (kF16) {
          lo[q] = _mm256_fmadd_ps(halves8(col), ak, lo[q]);
          hi[q] = _mm256_fmadd_ps(halves8(col + 16), ak, hi[q]);
        } else {
          lo[q] = _mm256_add_ps(_mm256_loadu_ps(reinterpret_cast<const float*>(col)), lo[q]);
        }
      }
    }
  }
  __m256 s = _mm256_setzero_ps();
  for (int q = 0; q < kPanels; ++q) s = _mm256_add_ps(s, _mm256_add_ps(lo[q], hi[q]));
  return lane0(s);
}

// The same work on 4 panels interleaved a column pair (one line) at a time: one stream (the
// F16x64 decode).
COHORT_AVX2 float f16_interleaved(const uint8_t* p, size_t bytes, const float* a) {
  __m256 lo[kPanels], hi[kPanels];
  for (int q = 0; q < kPanels; ++q) lo[q] = hi[q] = _mm256_setzero_ps();
  for (size_t b = 0; b + kPanels * kPanelBytes <= bytes; b += kPanels * kPanelBytes) {
    for (int64_t k = 0; k < kPanelCols; k += 2) {
      const uint8_t* pair = p + b + k * kPanels * kColBytes;
      const __m256 a0 = _mm256_broadcast_ss(a + k), a1 = _mm256_broadcast_ss(a + k + 1);
      for (int q = 0; q < kPanels; ++q) {
        const uint8_t* line = pair + q * 2 * kColBytes;
        lo[q] = _mm256_fmadd_ps(halves8(line), a0, lo[q]);
        hi[q] = _mm256_fmadd_ps(halves8(line + 16), a0, hi[q]);
        lo[q] = _mm256_fmadd_ps(halves8(line + 32), a1, lo[q]);
        hi[q] = _mm256_fmadd_ps(halves8(line + 48), a1, hi[q]);
      }
    }
  }
  __m256 s = _mm256_setzero_ps();
  for (int q = 0; q < kPanels; ++q) s = _mm256_add_ps(s, _mm256_add_ps(lo[q], hi[q]));
  return lane0(s);
}

// One panel at a time (one stream) with only its 2 chains: the FMA latency shows.
COHORT_AVX2 float f16_one_panel(const uint8_t* p, size_t bytes, const float* a) {
  __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
  for (size_t b = 0; b + kPanelBytes <= bytes; b += kPanelBytes) {
    for (int64_t k = 0; k < kPanelCols; ++k) {
      const __m256 ak = _mm256_broadcast_ss(a + k);
      lo = _mm256_fmadd_ps(halves8(p + b + k * kColBytes), ak, lo);
      hi = _mm256_fmadd_ps(halves8(p + b + k * kColBytes + 16), ak, hi);
    }
  }
  return lane0(_mm256_add_ps(lo, hi));
}

using ReadFn = float (*)(const uint8_t*, size_t, const float*);

void bm_read_pattern(benchmark::State& state, ReadFn read) {
  if (!cpu_runs_avx2()) {
    state.SkipWithError("needs AVX2, FMA and F16C");
    return;
  }
  Result<HugePageBuffer> buffer = HugePageBuffer::allocate(kBufferBytes);
  if (!buffer.is_ok()) {
    state.SkipWithError("no memory for the 1 GiB buffer");
    return;
  }
  // Small finite halves (0x3000 = 0.125, low bits varied) so that the sums stay finite.
  uint8_t* data = buffer->data();
  for (size_t i = 0; i < kBufferBytes; i += 2) {
    const uint16_t h = static_cast<uint16_t>(0x3000 | ((i >> 1) & 0x3ff));
    std::memcpy(data + i, &h, sizeof h);
  }
  static float act[kPanelCols];
  for (int64_t k = 0; k < kPanelCols; ++k) act[k] = 1.0f / static_cast<float>(k + 1);
  float sink = 0;
  for (auto _ : state) {
    sink += read(data, kBufferBytes, act);
    benchmark::DoNotOptimize(sink);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(kBufferBytes));
}

BENCHMARK_CAPTURE(bm_read_pattern, plain_one_stream, plain_stream)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bm_read_pattern, plain_four_panels, four_panels<false>)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bm_read_pattern, f16_four_panels, four_panels<true>)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bm_read_pattern, f16_interleaved, f16_interleaved)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bm_read_pattern, f16_one_panel, f16_one_panel)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace cohort
