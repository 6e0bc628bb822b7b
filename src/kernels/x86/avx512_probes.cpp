// The avx512_vnni table's FMA peak probe: the avx2 probe's chains in 16-lane registers. The
// roofline's FMA peak must be what the widest FMA the table's kernels use can reach: on cores
// that split a 512-bit FMA into two 256-bit halves (Zen 4) it measures what the 8-lane probe
// does, on cores with 512-bit FMA pipes (Zen 5, Intel server cores with two 512-bit units)
// twice that, and there the 8-lane figure would put 512-bit prompt tiles above "100% of peak".
// 12 independent chains cover two pipes of 4 cycles' latency with headroom, as in avx2_probes.
//
// And its read probe, which reads the way the table's decode tiles do: where
// kernels::decode_wide(), 512-bit loads in runs of blocks between prefetch asks
// (for_each_block_in_runs), else the avx2 probe. On the Zen 5 VM of stop 38 the wide decode
// tiles read 117-128% of the avx2 probe's figure (a prefetch ask and a loop turn every 128
// bytes): a roofline below what the kernels read.
#include "kernels/registry.h"
#include "kernels/x86/simd_avx512.h"

namespace cohort::kernels {
namespace {

// The table's read probe before this file's fill (the avx2 one).
float (*g_avx2_read_sum)(const float*, int64_t) = nullptr;

constexpr int64_t kReadBlockFloats = 64;  // 256 bytes: 4 vectors, one per accumulator

float read_sum_x16(const float* x, int64_t n) {
  if (!decode_wide()) return g_avx2_read_sum(x, n);
  __m512 acc[4];
  for (__m512& a : acc) a = _mm512_setzero_ps();
  const auto* base = reinterpret_cast<const uint8_t*>(x);
  avx2::LinePrefetcher ahead(base, decode_prefetch_bytes());
  const int64_t nb = n / kReadBlockFloats;
  for_each_block_in_runs<kReadBlockFloats * sizeof(float)>(base, nb, ahead, [&](int64_t b) {
    const float* p = x + b * kReadBlockFloats;
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) acc[c] = _mm512_add_ps(acc[c], _mm512_loadu_ps(p + 16 * c));
  });
  float s = _mm512_reduce_add_ps(
      _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
  for (int64_t i = nb * kReadBlockFloats; i < n; ++i) s += x[i];
  return s;
}

double fma_loop_x16(int64_t iters, float* sink) {
  constexpr int kChains = 12;
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  // x -> 0.999 x + 0.001 converges to 1: bounded and never denormal.
  const __m512 m = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], m, b);
  }
  __m512 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm512_add_ps(s, acc[c]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  for (float v : lanes) *sink += v;
  return 2.0 * 16 * kChains * static_cast<double>(iters);
}

}  // namespace

void fill_avx512_probes(KernelTable& t) {
  t.fma_loop = fma_loop_x16;
  g_avx2_read_sum = t.read_sum;
  t.read_sum = read_sum_x16;
}

}  // namespace cohort::kernels
