// AVX-512 products of packed Q4_K and Q5_K panels of 16 rows (kernels/packed_layouts.h
// "Q4_Kx16" and "Q5_Kx16", the 16 rows in the 16 int32 lanes) with Q8_K activations, decode
// and prefill alike: the avx512_vnni table's Q4_K and Q5_K. Per sub-block of 32 columns, one
// 512-bit load holds 8 columns of all 16 rows; its low nibbles (v & 0x0F) and high ones (Q4_K:
// in place, v & 0xF0, 16 x the code; Q5_K: shifted down, each nibble with its fifth bit
// moved up from the sub-block's 64 bytes of them) each meet a token's 4 activation bytes,
// broadcast to every lane, in one vpdpbusd; the sub-block's int32 sums take its scale by an
// int32 multiply. The mins term sum_j min_j * sum_j(a) is 4 madds per super-block of a row's
// mins in pairs with the token's pairs of sub-block sums. Per super-block and token: one fma
// with d_w * d_a, one with dmin_w * d_a.
//
// Exactness: the same exact integers as the AVX2 tiles (avx2_packed_k.cpp k_tile, VNNI or
// not) in the same float operations, so the same bits: a sub-block's dot is at most 32 * 31 *
// 128 (Q5_K; Q4_K's codes <= 15), times a scale <= 63, over 8 sub-blocks: < 2^31.
//
// Compiled with AVX-512 flags: nothing here has external or vague linkage but the fill_
// function (x86/simd_avx512.h says why).
#include <cstdint>

#include "kernels/packed_layouts.h"
#include "kernels/registry.h"
#include "kernels/x86/packed_tiles.h"
#include "kernels/x86/q8_k_terms.h"
#include "kernels/x86/simd_avx512.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

constexpr int kGroupBytes = 64;

// Tokens per prefill tile: each keeps a sub-block's two sums, the super-block's sum and its
// float accumulator in registers.
constexpr int kTokenTile = 6;

// How far ahead a one-token tile asks for its lines: it asks a sub-block (256 bytes) at a time,
// so where decode_wide() a run further than decode_prefetch_bytes() (x86/packed_tiles.h
// wide_piece_ahead: the same model's products had read ~10% slower than Q4_0's with the same
// bytes, stop 52); elsewhere the distance alone, as measured before.
inline int64_t q4_k_decode_lead() {
  const int64_t distance = decode_prefetch_bytes();
  return decode_wide() ? avx2::wide_piece_ahead(distance) : distance;
}

// The two layouts' sub-blocks (packed_layouts.h KQuantSubBlocks).
using Q4Kx16 = KQuantSubBlocks<kQ4_Kx16PanelRows, false>;
using Q5Kx16 = KQuantSubBlocks<kQ4_Kx16PanelRows, true>;

// One panel (16 rows at r, stored up to r1) x tokens t .. t + T - 1 (terms of token t at
// td, ts), layout L. One token (decode) keeps two chains per nibble half (groups 0, 2 and 1,
// 3).
template <class L, int T>
void panel_tile(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                const float* td, const int16_t* ts, int64_t nb, bool prefetch) {
  constexpr int kChains = T == 1 ? 2 : 1;
  const BlockQ8_K* a[T];
  __m512 acc[T];
  const __mmask16 m = row_mask(r1 - r);
  for (int j = 0; j < T; ++j) {
    a[j] =
        reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(g.a) + (t + j) * g.a_stride);
    acc[j] = start_rows_x16(g, g.y + (t + j) * g.y_stride + r, m);
  }
  const __m512i low = _mm512_set1_epi8(0x0F), high = _mm512_set1_epi8(static_cast<char>(0xF0));
  // One token asks for its lines a sub-block (256 bytes) at a time, q4_k_decode_lead() ahead.
  avx2::LinePrefetcher ahead(panel, prefetch ? q4_k_decode_lead() : 0, prefetch);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = panel + b * L::kBlockBytes;
    ahead.upto(blk + L::kQsOffset);
    // The mins term first (the mins lead the block): sum_k madd(mins pair k, sums pair k).
    __m512i mins[4];
    for (int k = 0; k < 4; ++k) {
      mins[k] = _mm512_cvtepu8_epi16(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + kQ4_Kx16MinsOffset + 32 * k)));
    }
    __m512i summ[T], sumi[T];
#pragma GCC unroll 8
    for (int j = 0; j < T; ++j) {
      const int16_t* s = ts + 8 * (j * nb + b);
      summ[j] = _mm512_madd_epi16(mins[0], broadcast4_x16(s));
      for (int k = 1; k < 4; ++k) {
        summ[j] = _mm512_add_epi32(summ[j], _mm512_madd_epi16(mins[k], broadcast4_x16(s + 2 * k)));
      }
      sumi[j] = _mm512_setzero_si512();
    }
    for (int sb = 0; sb < 8; ++sb) {
      const uint8_t* sub = blk + L::kQsOffset + L::kSubBytes * sb;
      const uint8_t* qs = sub + L::kCodesAt;
      ahead.upto(sub + L::kSubBytes);
      __m512i plo[T][kChains], phi[T][kChains];
      for (int j = 0; j < T; ++j) {
        for (int c = 0; c < kChains; ++c) plo[j][c] = phi[j][c] = _mm512_setzero_si512();
      }
      const __m512i h = L::kFive ? load_in_register(sub) : _mm512_setzero_si512();
      // Group grp's codes meet the tokens' activation bytes of its columns.
      const auto group = [&]<int grp>() {
        const __m512i v = load_in_register(qs + kGroupBytes * grp);
        __m512i vl, vh;
        if constexpr (L::kFive) {
          five_bit_codes<grp>(v, h, low, vl, vh);
        } else {
          vl = _mm512_and_si512(v, low);
          vh = _mm512_and_si512(v, high);
        }
        constexpr int c = grp % kChains;
#pragma GCC unroll 8
        for (int j = 0; j < T; ++j) {
          const int8_t* q = a[j][b].qs + 32 * sb + 8 * grp;
          plo[j][c] = _mm512_dpbusd_epi32(plo[j][c], vl, broadcast4_x16(q));
          phi[j][c] = _mm512_dpbusd_epi32(phi[j][c], vh, broadcast4_x16(q + 4));
        }
      };
      group.template operator()<0>();
      group.template operator()<1>();
      group.template operator()<2>();
      group.template operator()<3>();
      const __m512i sc = _mm512_cvtepu8_epi32(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + kQ4_Kx16ScalesOffset + 16 * sb)));
#pragma GCC unroll 8
      for (int j = 0; j < T; ++j) {
        __m512i lo = plo[j][0], hi = phi[j][0];
        if constexpr (kChains == 2) {
          lo = _mm512_add_epi32(lo, plo[j][1]);
          hi = _mm512_add_epi32(hi, phi[j][1]);
        }
        // Q4_K's high nibbles were 16 x their codes; Q5_K's are the codes.
        const __m512i dot = _mm512_add_epi32(lo, L::kFive ? hi : _mm512_srai_epi32(hi, 4));
        sumi[j] = _mm512_add_epi32(sumi[j], _mm512_mullo_epi32(dot, sc));
      }
    }
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk)));
    const __m512 dminw =
        _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 32)));
#pragma GCC unroll 8
    for (int j = 0; j < T; ++j) {
      const __m512 da = _mm512_set1_ps(td[j * nb + b]);
      acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sumi[j]), _mm512_mul_ps(dw, da), acc[j]);
      acc[j] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(summ[j]), _mm512_mul_ps(dminw, da), acc[j]);
    }
  }
  for (int j = 0; j < T; ++j) _mm512_mask_storeu_ps(g.y + (t + j) * g.y_stride + r, m, acc[j]);
}

template <class L>
void gemm_packed_kx16(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  static thread_local Q8KTerms<SumsOf32> terms;
  terms.make(g, t0, t1);
  const int64_t nb = g.n / kQK_K;
  const bool prefetch = t1 - t0 == 1 && decode_prefetch();
  avx2::for_each_panel_tile<kQ4_Kx16PanelRows, kTokenTile>(
      g, r0, r1, t0, t1, [&]<int T>(const uint8_t* panel, int64_t r, int64_t t) {
        const int64_t k = (t - t0) * nb;
        panel_tile<L, T>(g, panel, r, r1, t, terms.d() + k, terms.sums() + SumsOf32::kPerBlock * k,
                         nb, prefetch);
      });
}

}  // namespace

void fill_avx512_packed_q4_q5_k(KernelTable& t) {
  set_packed_x16(t.types[static_cast<uint32_t>(DType::kQ4_K)].packed, q4_kx16_panel_bytes,
                 pack_q4_kx16, gemm_packed_kx16<Q4Kx16>);
  set_packed_x16(t.types[static_cast<uint32_t>(DType::kQ5_K)].packed, q5_kx16_panel_bytes,
                 pack_q5_kx16, gemm_packed_kx16<Q5Kx16>);
}

}  // namespace cohort::kernels
