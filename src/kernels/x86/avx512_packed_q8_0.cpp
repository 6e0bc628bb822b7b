// AVX-512 product of packed Q8_0 panels of 16 rows (kernels/packed_layouts.h "Q8_0x16", the
// 16 rows in the 16 int32 lanes, codes stored as q + 128) with Q8_0 activations: the
// avx512_vnni table's Q8_0. For a prompt one 512-bit load holds 4 columns of all 16 rows as
// unsigned bytes, which meet a token's 4 activation bytes, broadcast to every lane, in
// one vpdpbusd: sum (q + 128) a - 128 sum a = sum q a, the second term one integer per token
// block. The AVX2 tiles (avx2_packed_q8_0.cpp) take |w| and move the signs onto the
// activations first (vpsignb, which AVX-512 lacks): per 4 columns of 8 rows and token, 2 or 4
// instructions where this takes 1 for 16 rows. One token (decode) takes each load as two
// 256-bit halves instead (decode_panel_256: it streams better from memory on Zen 4), or where
// kernels::decode_wide() whole, its blocks in runs (decode_panel_512).
//
// Exactness: a lane adds 4 products of at most 255 * 128 per group, over 8 groups: exact in
// int32, and the block's integer is sum q a, the AVX2 tiles' own; then the same float
// operations (fma(float(dot), d_w * d_a, acc) block by block in order), so the same bits.
//
// Compiled with AVX-512 flags: nothing here has external or vague linkage but the fill_
// function (x86/simd_avx512.h says why).
#include <cstdint>

#include "kernels/packed_layouts.h"
#include "kernels/registry.h"
#include "kernels/x86/packed_tiles.h"
#include "kernels/x86/simd_avx512.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

constexpr int kGroups = 8;
constexpr int kGroupBytes = 64;

// Tokens per prefill tile: each keeps one int32 sum and a float accumulator in registers.
constexpr int kTokenTile = 8;

// One panel (16 rows at r, stored up to r1) x tokens t .. t + T - 1 (terms of token t at
// td, toff), T >= 2: one int32 sum per token and block.
template <int T>
void panel_tile(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                const float* td, const int32_t* toff, int64_t nb) {
  const BlockQ8_0* a[T];
  __m512 acc[T];
  const __mmask16 m = row_mask(r1 - r);
  for (int j = 0; j < T; ++j) {
    a[j] =
        reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(g.a) + (t + j) * g.a_stride);
    acc[j] = start_rows_x16(g, g.y + (t + j) * g.y_stride + r, m);
  }
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = panel + b * kQ8_0x16BlockBytes;
    __m512i sum[T];
    for (int j = 0; j < T; ++j) sum[j] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int grp = 0; grp < kGroups; ++grp) {
      const __m512i w = _mm512_loadu_si512(blk + 32 + kGroupBytes * grp);
#pragma GCC unroll 8
      for (int j = 0; j < T; ++j) {
        sum[j] = _mm512_dpbusd_epi32(sum[j], w, broadcast4_x16(a[j][b].qs + 4 * grp));
      }
    }
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk)));
#pragma GCC unroll 8
    for (int j = 0; j < T; ++j) {
      const __m512i dot = _mm512_sub_epi32(sum[j], _mm512_set1_epi32(toff[j * nb + b]));
      const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(td[j * nb + b]));
      acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scale, acc[j]);
    }
  }
  for (int j = 0; j < T; ++j) _mm512_mask_storeu_ps(g.y + (t + j) * g.y_stride + r, m, acc[j]);
}

// One token x one panel in 256-bit registers (EVEX vpdpbusd on ymm): rows 0-7 from each
// group's first 32 bytes, rows 8-15 from its second, each half in 2 int32 chains; per row the
// same integers and float operations as panel_tile. Why not 512-bit: out of memory near one
// core's streaming limit, `decode_layers_bench --type q8_0 -t 1 --rounds 12` (stop 29, Zen 4
// VM, 3 runs a way, interleaved) read 90-95% of a plain read with the 512-bit tile, 93-97%
// with the AVX2 table's and 95-96% with this; in cache this reads 84 GB/s, the 512-bit tile
// 71-84 and the AVX2 one 66 (kernels_bench gemm_packed/.../q8_0/256/2048/1).
void decode_panel_256(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                      const float* td, const int32_t* toff, int64_t nb, bool prefetch) {
  const auto* a =
      reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(g.a) + t * g.a_stride);
  const __mmask16 m = row_mask(r1 - r);
  float* y = g.y + t * g.y_stride + r;
  __m256 acc[2];
  start_halves_x16(g, y, m, acc);
  avx2::LinePrefetcher ahead(panel, decode_prefetch_bytes(), prefetch);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = panel + b * kQ8_0x16BlockBytes;
    ahead.upto(blk + kQ8_0x16BlockBytes);
    __m256i lo[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    __m256i hi[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
#pragma GCC unroll 8
    for (int grp = 0; grp < kGroups; ++grp) {
      const __m256i av = broadcast4_x8(a[b].qs + 4 * grp);
      const uint8_t* w = blk + 32 + kGroupBytes * grp;
      lo[grp % 2] = _mm256_dpbusd_epi32(
          lo[grp % 2], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)), av);
      hi[grp % 2] = _mm256_dpbusd_epi32(
          hi[grp % 2], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32)), av);
    }
    const __m256 dlo = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk)));
    const __m256 dhi = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 16)));
    const __m256i off = _mm256_set1_epi32(toff[b]);
    const __m256 da = _mm256_set1_ps(td[b]);
    const __m256i dot_lo = _mm256_sub_epi32(_mm256_add_epi32(lo[0], lo[1]), off);
    const __m256i dot_hi = _mm256_sub_epi32(_mm256_add_epi32(hi[0], hi[1]), off);
    acc[0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_lo), _mm256_mul_ps(dlo, da), acc[0]);
    acc[1] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_hi), _mm256_mul_ps(dhi, da), acc[1]);
  }
  store_halves_x16(y, m, acc);
}

// One token x one panel in 512-bit registers, blocks in runs (for_each_block_in_runs): per
// row the integers and float operations of decode_panel_256 (two int32 chains, groups 0, 2, ..
// and 1, 3, ..).
void decode_panel_512(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                      const float* td, const int32_t* toff, int64_t nb, bool prefetch) {
  const auto* a =
      reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(g.a) + t * g.a_stride);
  const __mmask16 m = row_mask(r1 - r);
  float* y = g.y + t * g.y_stride + r;
  __m512 acc = start_rows_x16(g, y, m);
  avx2::LinePrefetcher ahead(panel, decode_prefetch_bytes(), prefetch);
  auto block = [&](int64_t b) {
    const uint8_t* blk = panel + b * kQ8_0x16BlockBytes;
    __m512i sum[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
#pragma GCC unroll 8
    for (int grp = 0; grp < kGroups; ++grp) {
      sum[grp % 2] =
          _mm512_dpbusd_epi32(sum[grp % 2], _mm512_loadu_si512(blk + 32 + kGroupBytes * grp),
                              broadcast4_x16(a[b].qs + 4 * grp));
    }
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk)));
    const __m512i dot =
        _mm512_sub_epi32(_mm512_add_epi32(sum[0], sum[1]), _mm512_set1_epi32(toff[b]));
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(dw, _mm512_set1_ps(td[b])), acc);
  };
  for_each_block_in_runs<kQ8_0x16BlockBytes>(panel, nb, ahead, block);
  _mm512_mask_storeu_ps(y, m, acc);
}

void gemm_packed_q8_0x16(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  static thread_local Q8_0Terms<128> terms;
  terms.make(g, t0, t1);
  const int64_t nb = g.n / kQK;
  const bool prefetch = t1 - t0 == 1 && decode_prefetch();
  const bool wide = decode_wide();
  avx2::for_each_panel_tile<kQ8_0x16PanelRows, kTokenTile>(
      g, r0, r1, t0, t1, [&]<int T>(const uint8_t* panel, int64_t r, int64_t t) {
        const int64_t k = (t - t0) * nb;
        if constexpr (T == 1) {
          if (wide) {
            decode_panel_512(g, panel, r, r1, t, terms.d() + k, terms.offset() + k, nb, prefetch);
          } else {
            decode_panel_256(g, panel, r, r1, t, terms.d() + k, terms.offset() + k, nb, prefetch);
          }
        } else {
          panel_tile<T>(g, panel, r, r1, t, terms.d() + k, terms.offset() + k, nb);
        }
      });
}

}  // namespace

void fill_avx512_packed_q8_0(KernelTable& t) {
  TypeOps::Packed& p = t.types[static_cast<uint32_t>(DType::kQ8_0)].packed;
  p.panel_rows = kQ8_0x16PanelRows;
  p.panel_bytes = q8_0x16_panel_bytes;
  p.pack_panel = pack_q8_0x16;
  p.gemm = gemm_packed_q8_0x16;
  p.accumulates = true;
}

}  // namespace cohort::kernels
