// AVX-512 product of packed Q4_0 panels of 16 rows (kernels/packed_layouts.h "Q4_0x16", the
// 16 rows in the 16 int32 lanes of a 512-bit register) with Q8_0 activations: the
// avx512_vnni table's Q4_0 (kernels/dispatch.cpp). Per block, one 512-bit load holds 8
// columns of all 16 rows (decode takes it as two 256-bit halves, decode_panel, or where
// kernels::decode_wide() whole, decode_panel_512, its blocks in runs); its low
// nibbles (v & 0x0F) and its high ones in place (v & 0xF0, 16 x the code) each meet a token's 4
// activation bytes broadcast to every lane (vpdpbusd's embedded broadcast) in one vpdpbusd. Against
// the 8-row AVX2 tiles that is half the instructions for the same bytes: where a one-token tile
// computed barely faster than memory streams (the Zen 4 VM's 39 GB/s in L2 against 35 from memory
// on one thread), the gap is what keeps decode below the read bandwidth.
//
// Exactness and determinism, as in avx2_packed_q4_0.cpp, whose bits these are: a block's
// integer dot sum (q - 8) a = sum q a - 8 sum a is exact in int32 (each vpdpbusd lane adds 4
// products of at most 240 * 128), and each (row, token) pair has one float accumulator
// updated block by block in order with fma(float(dot), d_w * d_a).
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

constexpr size_t kBlockBytes = kQ4_0x16BlockBytes;
constexpr size_t kScaleBytes = 32;  // d[16] before the groups
constexpr size_t kGroupBytes = 64;

// Tokens per prefill tile: each keeps two int32 sums and a float accumulator in registers.
constexpr int kTokenTile = 6;

// A block's integer dots to the rows' float sums: acc + float(lo + hi / 16 - offset) * d_w * d_a.
inline __m512 add_block(__m512 acc, __m512i lo, __m512i hi, int32_t offset, __m512 dw, float da) {
  __m512i dot = _mm512_add_epi32(lo, _mm512_srai_epi32(hi, 4));
  dot = _mm512_sub_epi32(dot, _mm512_set1_epi32(offset));
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(dw, _mm512_set1_ps(da)), acc);
}

// A block's integer dots to 8 rows' float sums, as add_block for 16.
inline __m256 add_block_256(__m256 acc, __m256i lo, __m256i hi, int32_t offset, __m256 dw,
                            float da) {
  __m256i dot = _mm256_add_epi32(lo, _mm256_srai_epi32(hi, 4));
  dot = _mm256_sub_epi32(dot, _mm256_set1_epi32(offset));
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(dw, _mm256_set1_ps(da)), acc);
}

// One panel (16 rows at r, stored up to r1) x token t: decode, in 256-bit registers (EVEX
// vpdpbusd on ymm): rows 0-7 from each group's first 32 bytes, rows 8-15 from its second; the
// low and the high nibbles of each half keep two int32 chains (groups 0, 2 and 1, 3). Per row
// the same integers and float operations as the 512-bit prompt tiles. Why not 512-bit: out of
// memory on one thread (`decode_layers_bench --type q4_0 -t 1 --rounds 12`, stop 29, Zen 4
// VM, 3 runs a way, interleaved) the 512-bit tile read 90-94% of a plain read, the AVX2 table's
// 94-97%, this 94-99%; in cache this reads 53 GB/s, the 512-bit tile 48-57 and the AVX2 one 43.
void decode_panel(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                  const float* td, const int32_t* toff, int64_t nb, bool prefetch) {
  const auto* a =
      reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(g.a) + t * g.a_stride);
  float* y = g.y + t * g.y_stride + r;
  const __mmask16 m = row_mask(r1 - r);
  __m256 acc[2];
  start_halves_x16(g, y, m, acc);
  const __m256i low = _mm256_set1_epi8(0x0F), high = _mm256_set1_epi8(static_cast<char>(0xF0));
  StreamPrefetcher ahead(panel, prefetch, decode_prefetch_bytes());
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = panel + b * kBlockBytes;
    ahead.upto(blk + kBlockBytes);
    const int8_t* q = a[b].qs;
    // [half][chain]: half 0 rows 0-7, half 1 rows 8-15.
    __m256i lo[2][2], hi[2][2];
    for (int h = 0; h < 2; ++h) lo[h][0] = lo[h][1] = hi[h][0] = hi[h][1] = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int grp = 0; grp < 4; ++grp) {
      const __m256i al = broadcast4_x8(q + 8 * grp), ah = broadcast4_x8(q + 8 * grp + 4);
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m256i v = _mm256_loadu_si256(
            reinterpret_cast<const __m256i*>(blk + kScaleBytes + kGroupBytes * grp + 32 * h));
        lo[h][grp & 1] = _mm256_dpbusd_epi32(lo[h][grp & 1], _mm256_and_si256(v, low), al);
        hi[h][grp & 1] = _mm256_dpbusd_epi32(hi[h][grp & 1], _mm256_and_si256(v, high), ah);
      }
    }
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256 dw =
          _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 16 * h)));
      acc[h] = add_block_256(acc[h], _mm256_add_epi32(lo[h][0], lo[h][1]),
                             _mm256_add_epi32(hi[h][0], hi[h][1]), toff[b], dw, td[b]);
    }
  }
  store_halves_x16(y, m, acc);
}

// One panel x token t in 512-bit registers: decode_panel's integers and float operations per
// row, with whole groups (16 rows) per load; two int32 chains per nibble half.
void decode_panel_512(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                      const float* td, const int32_t* toff, int64_t nb, bool prefetch) {
  const auto* a =
      reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(g.a) + t * g.a_stride);
  float* y = g.y + t * g.y_stride + r;
  const __mmask16 m = row_mask(r1 - r);
  __m512 acc = start_rows_x16(g, y, m);
  const __m512i low = _mm512_set1_epi8(0x0F), high = _mm512_set1_epi8(static_cast<char>(0xF0));
  StreamPrefetcher ahead(panel, prefetch, decode_prefetch_bytes());
  auto block = [&](int64_t b) {
    const uint8_t* blk = panel + b * kBlockBytes;
    const int8_t* q = a[b].qs;
    __m512i lo[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
    __m512i hi[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
#pragma GCC unroll 4
    for (int grp = 0; grp < 4; ++grp) {
      const __m512i v = _mm512_loadu_si512(blk + kScaleBytes + kGroupBytes * grp);
      lo[grp & 1] =
          _mm512_dpbusd_epi32(lo[grp & 1], _mm512_and_si512(v, low), broadcast4_x16(q + 8 * grp));
      hi[grp & 1] = _mm512_dpbusd_epi32(hi[grp & 1], _mm512_and_si512(v, high),
                                        broadcast4_x16(q + 8 * grp + 4));
    }
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk)));
    acc = add_block(acc, _mm512_add_epi32(lo[0], lo[1]), _mm512_add_epi32(hi[0], hi[1]), toff[b],
                    dw, td[b]);
  };
  for_each_block_in_runs<kBlockBytes>(panel, nb, ahead, block);
  _mm512_mask_storeu_ps(y, m, acc);
}

// One panel (16 rows at r, stored up to r1) x tokens t .. t + T - 1 (terms of token t at td,
// toff): prefill. A group's codes are loaded and split once for all T tokens.
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
  const __m512i low = _mm512_set1_epi8(0x0F), high = _mm512_set1_epi8(static_cast<char>(0xF0));
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = panel + b * kBlockBytes;
    __m512i lo[T], hi[T];
    for (int j = 0; j < T; ++j) lo[j] = hi[j] = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int grp = 0; grp < 4; ++grp) {
      const __m512i v = _mm512_loadu_si512(blk + kScaleBytes + kGroupBytes * grp);
      const __m512i vl = _mm512_and_si512(v, low), vh = _mm512_and_si512(v, high);
#pragma GCC unroll 8
      for (int j = 0; j < T; ++j) {
        const int8_t* q = a[j][b].qs + 8 * grp;
        lo[j] = _mm512_dpbusd_epi32(lo[j], vl, broadcast4_x16(q));
        hi[j] = _mm512_dpbusd_epi32(hi[j], vh, broadcast4_x16(q + 4));
      }
    }
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk)));
#pragma GCC unroll 8
    for (int j = 0; j < T; ++j)
      acc[j] = add_block(acc[j], lo[j], hi[j], toff[j * nb + b], dw, td[j * nb + b]);
  }
  for (int j = 0; j < T; ++j) _mm512_mask_storeu_ps(g.y + (t + j) * g.y_stride + r, m, acc[j]);
}

void gemm_packed_q4_0x16(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  static thread_local Q8_0Terms<8> terms;
  terms.make(g, t0, t1);
  const int64_t nb = g.n / kQK;
  const bool prefetch = t1 - t0 == 1 && decode_prefetch();
  const bool wide = decode_wide();
  avx2::for_each_panel_tile<kQ4_0x16PanelRows, kTokenTile>(
      g, r0, r1, t0, t1, [&]<int T>(const uint8_t* panel, int64_t r, int64_t t) {
        const int64_t k = (t - t0) * nb;
        if constexpr (T == 1) {
          if (wide) {
            decode_panel_512(g, panel, r, r1, t, terms.d() + k, terms.offset() + k, nb, prefetch);
          } else {
            decode_panel(g, panel, r, r1, t, terms.d() + k, terms.offset() + k, nb, prefetch);
          }
        } else {
          panel_tile<T>(g, panel, r, r1, t, terms.d() + k, terms.offset() + k, nb);
        }
      });
}

}  // namespace

void fill_avx512_packed_q4_0(KernelTable& t) {
  TypeOps::Packed& p = t.types[static_cast<uint32_t>(DType::kQ4_0)].packed;
  p.panel_rows = kQ4_0x16PanelRows;
  p.panel_bytes = q4_0x16_panel_bytes;
  p.pack_panel = pack_q4_0x16;
  p.gemm = gemm_packed_q4_0x16;
  p.accumulates = true;
}

}  // namespace cohort::kernels
