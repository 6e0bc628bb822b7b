// AVX2+FMA machine probes: a streaming read with enough independent adds to keep up with
// memory, and the FMA issue peak (Zen 3 and recent Intel cores: two 8-lane FMA pipes of 4
// cycles' latency, so at least 8 independent chains are needed; 12 leave headroom).
#include "kernels/registry.h"
#include "kernels/x86/packed_tiles.h"
#include "kernels/x86/simd_avx2.h"

namespace cohort::kernels {
namespace {

// The read probe reads the way the decode tiles do: with decode_prefetch() it asks for its
// lines as far ahead as they do, once a 4 KiB run (LinePrefetcher), else it leaves that to the
// hardware. On the Zen 5 VM of stop 46 an ask of 2 lines every 128 bytes read 55.6-59.1
// GB/s on 2 threads, runs of 32 steps 72.9-75.5 (three interleaved pairs), and 66-69.5 in
// avx2::for_each_block_run's loop (16 steps unrolled, two turns a run). Where
// prefetching pays, plain loads leave bandwidth unused (the Xeon VM of stop 18: a 2 GiB read
// gave 29.0 GB/s best on 2 threads and 15.0 on 1 without, 33.5 and 18.7 with, and F16 decode
// had read 106% of the plain figure); where it costs, they read more (the Zen 4 VM of stop
// 19: 36 GB/s on one thread against 32).
// Floats of a run of the read between two prefetch asks: the one-token tiles' run
// (packed_tiles.h kDecodeRunBytes).
constexpr int64_t kRunFloats = avx2::kDecodeRunBytes / sizeof(float);

// 128 bytes (4 vectors, one per sum) from x + i.
inline void add_block(const float* x, int64_t i, __m256* s) {
#pragma GCC unroll 4
  for (int v = 0; v < 4; ++v) s[v] = _mm256_add_ps(s[v], _mm256_loadu_ps(x + i + 8 * v));
}

float read_sum(const float* x, int64_t n) {
  avx2::LinePrefetcher ahead(x, decode_prefetch_bytes());
  __m256 s[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                 _mm256_setzero_ps()};
  int64_t i = 0;
  for (; i + kRunFloats <= n; i += kRunFloats) {
    ahead.upto(x + i + kRunFloats);
#pragma GCC unroll 32
    for (int64_t b = 0; b < kRunFloats; b += 32) add_block(x, i + b, s);
  }
  for (; i + 32 <= n; i += 32) {
    ahead.upto(x + i + 32);
    add_block(x, i, s);
  }
  float sum = avx2::hsum(_mm256_add_ps(_mm256_add_ps(s[0], s[1]), _mm256_add_ps(s[2], s[3])));
  for (; i < n; ++i) sum += x[i];
  return sum;
}

double fma_loop(int64_t iters, float* sink) {
  constexpr int kChains = 12;
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c));
  const __m256 m = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], m, b);
  }
  __m256 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm256_add_ps(s, acc[c]);
  *sink += avx2::hsum(s);
  return 2.0 * 8 * kChains * static_cast<double>(iters);
}

}  // namespace

void fill_avx2_probes(KernelTable& t) {
  t.read_sum = read_sum;
  t.fma_loop = fma_loop;
}

}  // namespace cohort::kernels
