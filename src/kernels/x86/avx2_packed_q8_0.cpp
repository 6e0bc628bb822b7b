// AVX2 product of packed Q8_0 panels (kernels/packed_layouts.h: 8 rows, the rows in the 8
// int32 lanes) with Q8_0 activations: decode and prefill alike. Per group of 4 columns of a
// panel, |w| is taken once for a tile of tokens; each token broadcasts its 4 activation
// bytes of those columns against all 8 rows: maddubs(|w|, sign(a, w)) multiplies 32 pairs
// and madd with ones adds them into the rows' int32 lanes. The row-major tiles needed a
// horizontal sum and a scale conversion per row and block instead. On a CPU with VNNI a
// VNNI table (avx2_vnni, avx2_vnni_evex) runs the same tile with vpdpbusd (panel_tile's kDot).
//
// Prefill cost: a (group, token) step is 4 vector instructions (sign, maddubs, madd, add), the
// first 3 on the two ports that multiply, so at least 1.5 cycles per 32 multiply-adds plus the
// block's scale work; the kernel runs near that bound (~130 GFLOP/s on one thread). Weights
// widened to int16 for vpmaddwd would need 2 widenings per group, 2 activation loads per step
// and a horizontal add and permute per block: more instructions in all, so not faster.
//
// Exactness and determinism: a weight of -128 gives |w| = 128, which maddubs reads as
// unsigned, and activations never hold -128, so each int16 pair sum is at most
// 2 * 128 * 127 = 32512: exact. The pairs are widened to int32 before any further sum, so
// a block's integer dot is exact. A (row, token) pair has one float accumulator, updated
// block by block in order with fma(float(dot), d_w * d_a): the same operations in every
// tile, so a row's bits do not depend on its panel's other rows, the token tile, or the
// split of panels between threads.
#include <algorithm>
#include <vector>

#include "kernels/packed_layouts.h"
#include "kernels/registry.h"
#include "kernels/x86/packed_tiles.h"
#include "kernels/x86/simd_avx2.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

// Tokens per tile: 6 accumulators, 6 block sums, the weights, their magnitudes and the
// constant 1 nearly fill the 16 ymm registers. Measured (kernels_bench, 1 thread, load ~4.6):
// 4 tokens 128.7 / 126.1 GFLOP/s on the 256x2048x128 / 256x8192x128 shapes, 5: 133.3 /
// 128.6, 6: 133.1 / 129.2.
constexpr int kTokenTile = 6;

// The activation scales of tokens [t0, t1) as floats (token t's blocks at (t - t0) * nb), in
// per-thread storage grown to the largest call seen: no allocation once warm; those of the
// last call when it read the same activations (TermsKey).
const float* token_scales(const GemmArgs& g, int64_t t0, int64_t t1) {
  thread_local std::vector<float> scales;
  thread_local TermsKey key;
  if (!key.fresh(g, t0, t1)) return scales.data();
  const int64_t nb = g.n / kQK;
  const size_t need = static_cast<size_t>((t1 - t0) * nb);
  if (scales.size() < need) scales.resize(need);
  for (int64_t t = t0; t < t1; ++t) {
    const auto* a =
        reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(g.a) + t * g.a_stride);
    float* out = scales.data() + (t - t0) * nb;
    for (int64_t b = 0; b < nb; ++b) out[b] = avx2::f16_to_f32(a[b].d);
  }
  return scales.data();
}

// P panels (8 rows each from row r, panel p at panel + p * g.w_stride) x tokens t .. t + T - 1
// (token j's scales at da + j * nb): a tile of tokens on one panel (prefill), or one token on
// one or two panels (decode, for_each_panel_pair). With kVnni (a VNNI table: kDot) a (group,
// token) step is sign and one vpdpbusd, which multiplies |w| by the sign-moved activations
// and adds a lane's 4 products into int32, where maddubs, madd and the add took three: the
// same exact integers, so the same bits. One or two tokens then keep two int32 chains per
// token and panel against vpdpbusd's latency.
template <int T, int P, avx2::Dot kDot>
inline void panel_tile(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                       const float* da, int64_t nb) {
  static_assert(P == 1 || T == 1, "several panels for one token only");
  constexpr bool kVnni = kDot != avx2::Dot::kMaddubs;
  constexpr int kChains = kVnni && T <= 2 ? 2 : 1;
  const BlockQ8_0* a[T];
  for (int j = 0; j < T; ++j) {
    a[j] =
        reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(g.a) + (t + j) * g.a_stride);
  }
  static_assert(kQ8_0PanelRows == 8, "a panel's rows are the 8 lanes of its sums");
  __m256 acc[P][T];
  avx2::start_tile<P, T>(g, acc, r, r1, t);
  // One token: the weights stream, asked for once a run of blocks (for_each_block_run).
  avx2::PanelPrefetchers<P> ahead(panel, g.w_stride);
  const __m256i ones = _mm256_set1_epi16(1);
  const auto block = [&](int64_t b) __attribute__((always_inline)) {
    const uint8_t* blk[P];
    for (int p = 0; p < P; ++p) blk[p] = panel + p * g.w_stride + b * kQ8_0x8BlockBytes;
    __m256i dot[P][T][kChains];
    for (int p = 0; p < P; ++p) {
      for (int j = 0; j < T; ++j) {
        for (int c = 0; c < kChains; ++c) dot[p][j][c] = _mm256_setzero_si256();
      }
    }
#pragma GCC unroll 8
    for (int grp = 0; grp < kQ8_0x8Groups; ++grp) {
#pragma GCC unroll 2
      for (int p = 0; p < P; ++p) {
        const __m256i w =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk[p] + 16 + 32 * grp));
        const __m256i aw = _mm256_sign_epi8(w, w);
#pragma GCC unroll 8
        for (int j = 0; j < T; ++j) {
          const __m256i s = _mm256_sign_epi8(avx2::broadcast4(a[j][b].qs + 4 * grp), w);
          __m256i& d = dot[p][j][grp % kChains];
          if constexpr (kVnni) {
            d = avx2::dpbusd<kDot>(d, aw, s);
          } else {
            d = _mm256_add_epi32(d, _mm256_madd_epi16(_mm256_maddubs_epi16(aw, s), ones));
            avx2::keep_in_register(d);
          }
        }
      }
    }
#pragma GCC unroll 2
    for (int p = 0; p < P; ++p) {
      const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk[p])));
#pragma GCC unroll 8
      for (int j = 0; j < T; ++j) {
        __m256i d = dot[p][j][0];
        if constexpr (kChains == 2) d = _mm256_add_epi32(d, dot[p][j][1]);
        const __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(da[j * nb + b]));
        acc[p][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), scale, acc[p][j]);
      }
    }
  };
  if constexpr (T == 1) {
    avx2::for_each_block_run<kQ8_0x8BlockBytes>(
        nb,
        [&](int64_t end) {
          for (int p = 0; p < P; ++p)
            ahead.upto(p, panel + p * g.w_stride + end * kQ8_0x8BlockBytes);
        },
        block);
  } else {
    for (int64_t b = 0; b < nb; ++b) block(b);
  }
  avx2::store_tile<P, T>(g, acc, r, r1, t);
}

template <avx2::Dot kDot>
void gemm_packed_q8_0(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const int64_t nb = g.n / kQK;
  const float* da = token_scales(g, t0, t1);
  if (t1 - t0 == 1) {
    avx2::for_each_panel_pair<kQ8_0PanelRows>(g, r0, r1,
                                              [&]<int P>(const uint8_t* panel, int64_t r) {
                                                panel_tile<1, P, kDot>(g, panel, r, r1, t0, da, nb);
                                              });
    return;
  }
  avx2::for_each_panel_tile<kQ8_0PanelRows, kTokenTile>(
      g, r0, r1, t0, t1, [&]<int T>(const uint8_t* panel, int64_t r, int64_t t) {
        panel_tile<T, 1, kDot>(g, panel, r, r1, t, da + (t - t0) * nb, nb);
      });
}

}  // namespace

void fill_vnni_packed_q8_0(KernelTable& t, bool evex) {
  t.types[static_cast<uint32_t>(DType::kQ8_0)].packed.gemm =
      evex ? gemm_packed_q8_0<avx2::Dot::kVnniEvex> : gemm_packed_q8_0<avx2::Dot::kVnniVex>;
}

void fill_avx2_packed_q8_0(KernelTable& t) {
  TypeOps::Packed& p = t.types[static_cast<uint32_t>(DType::kQ8_0)].packed;
  p.panel_rows = kQ8_0PanelRows;
  p.panel_bytes = q8_0x8_panel_bytes;
  p.pack_panel = pack_q8_0x8;
  p.gemm = gemm_packed_q8_0<avx2::Dot::kMaddubs>;
  p.accumulates = true;
}

}  // namespace cohort::kernels
