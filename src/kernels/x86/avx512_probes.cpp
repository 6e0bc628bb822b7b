// The avx512_vnni table's FMA peak probe: the avx2 probe's chains in 16-lane registers. The
// roofline's FMA peak must be what the widest FMA the table's kernels use can reach: on cores
// that split a 512-bit FMA into two 256-bit halves (Zen 4) it measures what the 8-lane probe
// does, on cores with 512-bit FMA pipes (Zen 5, Intel server cores with two 512-bit units)
// twice that, and there the 8-lane figure would put 512-bit prompt tiles above "100% of peak".
// 12 independent chains cover two pipes of 4 cycles' latency with headroom, as in avx2_probes.
#include "kernels/registry.h"
#include "kernels/x86/simd_avx512.h"

namespace cohort::kernels {
namespace {

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

void fill_avx512_probes(KernelTable& t) { t.fma_loop = fma_loop_x16; }

}  // namespace cohort::kernels
