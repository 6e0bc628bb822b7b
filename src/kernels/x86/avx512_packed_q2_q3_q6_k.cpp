// AVX-512 products of packed Q6_K, Q3_K and Q2_K panels of 16 rows (kernels/packed_layouts.h
// "Q6_Kx16", "Q3_Kx16" and "Q2_Kx16", the 16 rows in the 16 int32 lanes) with Q8_K activations,
// decode and prefill alike: the avx512_vnni table's Q6_K, Q3_K and Q2_K, one tile over the three
// layouts (Q6Kx16, Q3Kx16, Q2Kx16: where a chunk's bytes and scales sit, how its codes come
// together, their offset or mins). Below for Q6_K; Q3_K's codes u in [0, 7] stand for u - 4 (the
// -4 taken as the -32 is), its 2-bit and 1-bit planes put together as the 4-bit and 2-bit ones
// are; Q2_K's 2-bit codes need no offset, its mins term sum_j min_j sum_j(a) is 8 madds per
// super-block of a row's mins in pairs with the token's pairs of sub-block sums (the file's
// bsums), taken with dmin as Q4_K's is; its one-token tile takes a group's codes where they
// sit (4^G x each, G the group and its bit position) and divides the group's sum by 4^G (stop
// 45: one shift a group's sum instead of up to two a group's codes; the prompt tiles, where T
// tokens share the codes, still shift them down). Per chunk of 32 columns a group's 6-bit codes are
// put together once (low 4 bits from ql, top 2 from qh, by a bit select) for 16 rows; each token's
// 4 activation bytes meet them, broadcast to every lane, in one vpdpbusd. A sub-block's sum takes
// the -32 of the codes (sum (q - 32) a = sum q a - 32 sum a, the file's bsums times -32: SumsOf16,
// which the one-token tile's chain starts from) and then its scale by an int32 multiply. The codes'
// bytes are loaded once each into registers (load_in_register: with the loads folded into each
// use, the 64-byte loads bounded the one-token tiles, stop 48). The AVX2 tile (avx2_packed_k.cpp)
// needs maddubs, an int16 add and a madd per group and token for 8 rows; in L2 on the Zen 4 VM it
// computed slower (32 GB/s on one thread) than memory streams (35).
//
// Exactness: a sub-block's integer dot is at most 16 * 63 * 128 in magnitude, times a scale
// of |s| <= 128, summed over 16 sub-blocks: < 2^31. The super-block's integer is the same
// exact one as the AVX2 tile's (there the -32 term is taken once per super-block), then the
// same float operations (fma(float(dot), d_w * d_a, acc) per super-block in order), so the
// same bits; Q3_K's likewise (avx2_packed_k.cpp q236_k_tile, the -4 taken once per
// super-block there too). Q2_K: a sub-block's dot is at most 16 * 3 * 128 (a group's taken in
// place at most 4^3 * 8 * 3 * 128 before its exact division), times a scale <= 15;
// per super-block fma(float(sumi), d_w * d_a, acc), then fnmadd(float(summ), dmin_w * d_a,
// acc), as the AVX2 tile, so its bits too.
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

// The 6-bit codes of group grp of a Q6_Kx16 chunk (ql and qh its bytes) for 16 rows: the
// low-nibble columns in lo, the high-nibble ones in hi, each code in a byte.
inline void codes6(const uint8_t* ql, const uint8_t* qh, int grp, __m512i& lo, __m512i& hi) {
  const __m512i low = _mm512_set1_epi8(0x0F), top = _mm512_set1_epi8(0x30);
  const __m512i v = load_in_register(ql + kGroupBytes * grp);
  const __m512i h = load_in_register(qh + kGroupBytes * (grp / 2));
  // The plane's 2-bit fields of this group at bits 4..5 of each byte.
  const __m512i h_lo = grp % 2 ? h : _mm512_slli_epi16(h, 4);
  const __m512i h_hi = grp % 2 ? _mm512_srli_epi16(h, 2) : _mm512_slli_epi16(h, 2);
  // 0xB8: low ? v : h (a bit select), then keep bits 0..5. The select's first operand, which
  // the instruction overwrites, is the masked h: a value of its own, so no copy of `low`.
  lo = _mm512_ternarylogic_epi32(_mm512_and_si512(h_lo, top), low, v, 0xB8);
  hi = _mm512_ternarylogic_epi32(_mm512_and_si512(h_hi, top), low, _mm512_srli_epi16(v, 4), 0xB8);
}

// The 3-bit codes of group G of a Q3_Kx16 chunk for 16 rows, as codes6 gives Q6_K's: the low
// 2 bits from plane G / 2 of ql (at bits 4 (G % 2) + 2h of each byte), the third from qh (bit
// 2G + h), h = 0 for lo (columns 8G + m), 1 for hi (8G + 4 + m).
template <int G>
inline void codes3(const uint8_t* ql, const uint8_t* qh, __m512i& lo, __m512i& hi) {
  const __m512i two = _mm512_set1_epi8(0x03), bit2 = _mm512_set1_epi8(0x04);
  const __m512i v = load_in_register(ql + kGroupBytes * (G / 2));
  const __m512i h = load_in_register(qh);
  constexpr int kLow = 4 * (G % 2);
  // Bits 2G and 2G + 1 of h to bit 2 (epi16 shifts: what crosses into a byte's bit 2 comes
  // from bits 0..7 of that byte, the shifts being at most 5).
  const __m512i h_lo = G == 0 ? _mm512_slli_epi16(h, 2) : _mm512_srli_epi16(h, 2 * G - 2);
  const __m512i h_hi = G == 0 ? _mm512_slli_epi16(h, 1) : _mm512_srli_epi16(h, 2 * G - 1);
  // 0xB8: two ? v : h (a bit select, overwriting the masked h as codes6's); h keeps only bit 2.
  lo = _mm512_ternarylogic_epi32(_mm512_and_si512(h_lo, bit2), two, _mm512_srli_epi16(v, kLow),
                                 0xB8);
  hi = _mm512_ternarylogic_epi32(_mm512_and_si512(h_hi, bit2), two, _mm512_srli_epi16(v, kLow + 2),
                                 0xB8);
}

// Q2_Kx16's codes of group G of chunk c (packed_layouts.h Q2KPanel): columns 8G + m (lo, plane
// 0) and 8G + 4 + m (hi, plane 1), at bits 2G of each byte. kInPlace: 4^G x the codes (masked
// where they sit, for a sum divided once), else the codes themselves (shifted down; the epi16
// shift brings into a byte's bits 0..1 only that byte's own bits).
template <int G, bool kInPlace>
inline void codes2(const uint8_t* blk, int c, __m512i& lo, __m512i& hi) {
  using P = Q2KPanel<16>;
  const __m512i vl = _mm512_loadu_si512(blk + P::plane_offset(c, 0));
  const __m512i vh = _mm512_loadu_si512(blk + P::plane_offset(c, 1));
  if constexpr (kInPlace) {
    const __m512i mask = _mm512_set1_epi8(static_cast<char>(3 << (2 * G)));
    lo = _mm512_and_si512(vl, mask);
    hi = _mm512_and_si512(vh, mask);
  } else {
    const __m512i two = _mm512_set1_epi8(0x03);
    lo = _mm512_and_si512(G ? _mm512_srli_epi16(vl, 2 * G) : vl, two);
    hi = _mm512_and_si512(G ? _mm512_srli_epi16(vh, 2 * G) : vh, two);
  }
}

// codes2<G, kInPlace> for a group grp that is a constant where the tiles' unrolled loops call it.
template <bool kInPlace>
inline void codes2_of(const uint8_t* blk, int c, int grp, __m512i& lo, __m512i& hi) {
  switch (grp) {
    case 0:
      codes2<0, kInPlace>(blk, c, lo, hi);
      break;
    case 1:
      codes2<1, kInPlace>(blk, c, lo, hi);
      break;
    case 2:
      codes2<2, kInPlace>(blk, c, lo, hi);
      break;
    default:
      codes2<3, kInPlace>(blk, c, lo, hi);
      break;
  }
}

// The three layouts: a block's bytes, where chunk c's code planes (ql, qh) and its two
// sub-blocks' scales are, how group grp's codes come together, and the token terms they take
// (Sums, q8_k_terms.h): the codes' offset times the sub-block sums, taken off each sub-block's
// dot, or none where the mins (kMins: Q2_K) meet the file's bsums.
struct Q6Kx16 {
  static constexpr size_t kBlockBytes = kQ6_Kx16BlockBytes;
  using Sums = SumsOf16<int32_t, -32>;  // the codes' offset term
  static constexpr bool kMins = false;
  static constexpr bool kInPlace = false;
  static __m512i scales(const uint8_t* blk, int c, int half) {
    return _mm512_cvtepi8_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + q6_kx16_step(c) + 16 * half)));
  }
  static void codes(const uint8_t* blk, int c, int grp, __m512i& lo, __m512i& hi) {
    const uint8_t* step = blk + q6_kx16_step(c);
    codes6(step + kQ6_Kx16QlInStep, step + kQ6_Kx16QhInStep, grp, lo, hi);
  }
};
struct Q3Kx16 {
  static constexpr size_t kBlockBytes = kQ3_Kx16BlockBytes;
  using Sums = SumsOf16<int32_t, -4>;  // the codes' offset term
  static constexpr bool kMins = false;
  static constexpr bool kInPlace = false;
  static __m512i scales(const uint8_t* blk, int c, int half) {
    return _mm512_cvtepi8_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + q3_kx16_step(c) + 16 * half)));
  }
  static void codes(const uint8_t* blk, int c, int grp, __m512i& lo, __m512i& hi) {
    const uint8_t* ql = blk + q3_kx16_step(c) + kQ3_Kx16QlInStep;
    const uint8_t* qh = blk + q3_kx16_step(c) + kQ3_Kx16QhInStep;
    switch (grp) {  // a constant where the tiles' unrolled loops call it (a helper taking
                    // a lambda instead was not folded by GCC 12: stop 43)
      case 0:
        codes3<0>(ql, qh, lo, hi);
        break;
      case 1:
        codes3<1>(ql, qh, lo, hi);
        break;
      case 2:
        codes3<2>(ql, qh, lo, hi);
        break;
      default:
        codes3<3>(ql, qh, lo, hi);
        break;
    }
  }
};
struct Q2Kx16 {
  static constexpr size_t kBlockBytes = Q2KPanel<16>::kBlockBytes;
  using Sums = NoSums;  // the mins term reads the bsums in place
  static constexpr bool kMins = true;
  static constexpr bool kInPlace = true;
  static __m512i scales(const uint8_t* blk, int c, int half) {
    const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(
        reinterpret_cast<const __m128i*>(blk + Q2KPanel<16>::kScalesOffset + 16 * c)));
    return half ? _mm512_srli_epi32(v, 4) : _mm512_and_si512(v, _mm512_set1_epi32(0x0F));
  }
  static void codes(const uint8_t* blk, int c, int grp, __m512i& lo, __m512i& hi) {
    codes2_of<false>(blk, c, grp, lo, hi);
  }
  // 4^grp x the codes: 1 << in_place_shift(grp), by which a sum of their products divides
  // exactly.
  static void codes_in_place(const uint8_t* blk, int c, int grp, __m512i& lo, __m512i& hi) {
    codes2_of<true>(blk, c, grp, lo, hi);
  }
  static constexpr int in_place_shift(int grp) { return 2 * grp; }
};

// Q2_K's mins of sub-block pair k (2k, 2k + 1) for 16 rows as the int16 pairs of each lane
// (low half 2k, high half 2k + 1), from their nibbles: (b | b << 12) & 0x000F000F per lane
// (vpternlogd 0xA8: (A | B) & C).
inline __m512i min_pair(const uint8_t* blk, int k) {
  const __m512i b = _mm512_cvtepu8_epi32(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + Q2KPanel<16>::kMinsOffset + 16 * k)));
  return _mm512_ternarylogic_epi32(b, _mm512_slli_epi32(b, 12), _mm512_set1_epi32(0x000F000F),
                                   0xA8);
}

// Q2_K's mins term of a super-block (the 8 pairs' mins, mp) against a token's Q8_K block: sum_j
// min_j bsums_j in each row's lane.
inline __m512i mins_term(const __m512i mp[8], const BlockQ8_K& a) {
  __m512i s = _mm512_madd_epi16(mp[0], broadcast4_x16(a.bsums));
  for (int k = 1; k < 8; ++k) {
    s = _mm512_add_epi32(s, _mm512_madd_epi16(mp[k], broadcast4_x16(a.bsums + 2 * k)));
  }
  return s;
}

// How far ahead a one-token tile asks for its lines where decode_prefetch(): two
// super-blocks, as the AVX2 tile (kQ6_KDecodeAhead).
template <class L>
constexpr int64_t kPrefetchAhead = 2 * L::kBlockBytes;

// decode_panel's distance: kPrefetchAhead, a run further for Q3_K's and Q2_K's short blocks
// (x86/packed_tiles.h wide_piece_ahead; Q6_K's two blocks ask far enough already).
template <class L>
constexpr int64_t kWideDecodeAhead = avx2::wide_piece_ahead(kPrefetchAhead<L>);
static_assert(kWideDecodeAhead<Q6Kx16> == kPrefetchAhead<Q6Kx16>);
static_assert(kWideDecodeAhead<Q2Kx16> > kPrefetchAhead<Q2Kx16> &&
              kWideDecodeAhead<Q3Kx16> > kPrefetchAhead<Q3Kx16>);

// One panel (16 rows at r, stored up to r1) x token t (terms at td, ts) where decode_wide():
// panel_tile<1>'s integers and float operations, so its bits, with a block's 8 steps one
// unrolled stretch of code between two prefetch asks (x86/packed_tiles.h kDecodeRunBytes says
// why that pays on the Zen 5 VM): decode_layers_bench -t 2 read 86.6% and 95.1% of the plain
// read against panel_tile<1>'s 71.5% and 82.2% (stop 39; in L2 the two compute alike). A
// function of its own so the prompt tiles keep their code: unrolling the steps in panel_tile
// for every T took pp128 from 282, 262 to 177, 216 tok/s (stop 38).
template <class L>
void decode_panel(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                  const float* td, const int32_t* ts, int64_t nb, bool prefetch) {
  const auto* a =
      reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(g.a) + t * g.a_stride);
  float* y = g.y + t * g.y_stride + r;
  const __mmask16 m = row_mask(r1 - r);
  __m512 acc = start_rows_x16(g, y, m);
  avx2::LinePrefetcher ahead(panel, kWideDecodeAhead<L>, prefetch);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = panel + b * L::kBlockBytes;
    ahead.upto(blk + L::kBlockBytes);
    const int8_t* q = a[b].qs;
    const int32_t* s = ts + L::Sums::kPerBlock * b;
    // Q2_K's mins term first (the mins lead the block).
    __m512i summ = _mm512_setzero_si512();
    if constexpr (L::kMins) {
      __m512i mp[8];
      for (int k = 0; k < 8; ++k) mp[k] = min_pair(blk, k);
      summ = mins_term(mp, a[b]);
    }
    __m512i sumi = _mm512_setzero_si512();
    unrolled<8>([&](auto chunk) __attribute__((always_inline)) {
      constexpr int c = decltype(chunk)::value;
#pragma GCC unroll 2
      for (int half = 0; half < 2; ++half) {
        // Q6_K, Q3_K: one chain, starting at the sub-block's offset term (Sums), of its
        // two groups' low and high columns' products. Q2_K: two, each group's products in place
        // (4^grp x its sum, divided exactly before the two are added).
        __m512i chain[2] = {L::kMins ? _mm512_setzero_si512() : _mm512_set1_epi32(s[2 * c + half]),
                            _mm512_setzero_si512()};
#pragma GCC unroll 2
        for (int grp = 2 * half; grp < 2 * half + 2; ++grp) {
          __m512i lo, hi;
          const __m512i a_lo = broadcast4_x16(q + 32 * c + 8 * grp);
          const __m512i a_hi = broadcast4_x16(q + 32 * c + 8 * grp + 4);
          if constexpr (L::kInPlace) {
            L::codes_in_place(blk, c, grp, lo, hi);
          } else {
            L::codes(blk, c, grp, lo, hi);
          }
          __m512i& ch = chain[L::kInPlace ? grp % 2 : 0];
          ch = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(ch, lo, a_lo), hi, a_hi);
        }
        const __m512i sc = L::scales(blk, c, half);
        __m512i dot = chain[0];
        if constexpr (L::kInPlace) {
          // chain[i] holds group 2 half + i's sum (grp % 2 above).
          const int shift0 = L::in_place_shift(2 * half), shift1 = L::in_place_shift(2 * half + 1);
          if (shift0 != 0) dot = _mm512_srai_epi32(dot, shift0);
          dot = _mm512_add_epi32(dot, _mm512_srai_epi32(chain[1], shift1));
        }
        sumi = _mm512_add_epi32(sumi, _mm512_mullo_epi32(dot, sc));
        // Each sub-block's product added here, in this order: else GCC 12 reassociates the 16
        // adds, keeps the sub-blocks' sums and scales in flight at once and spills 20 of them
        // a block (the steps' scale loads all rose to the block's start).
        asm("" : "+v"(sumi));
      }
    });
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk)));
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sumi), _mm512_mul_ps(dw, _mm512_set1_ps(td[b])), acc);
    if constexpr (L::kMins) {
      const __m512 dminw =
          _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 32)));
      acc = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(summ), _mm512_mul_ps(dminw, _mm512_set1_ps(td[b])),
                             acc);
    }
  }
  _mm512_mask_storeu_ps(y, m, acc);
}

// One panel (16 rows at r, stored up to r1) x tokens t .. t + T - 1 (terms of token t at
// td, ts). One token (decode) keeps the low and high columns' products in two chains.
template <class L, int T>
void panel_tile(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                const float* td, const int32_t* ts, int64_t nb, bool prefetch) {
  const BlockQ8_K* a[T];
  __m512 acc[T];
  const __mmask16 m = row_mask(r1 - r);
  for (int j = 0; j < T; ++j) {
    a[j] =
        reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(g.a) + (t + j) * g.a_stride);
    acc[j] = start_rows_x16(g, g.y + (t + j) * g.y_stride + r, m);
  }
  avx2::LinePrefetcher ahead(panel, kPrefetchAhead<L>, prefetch);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = panel + b * L::kBlockBytes;
    // A whole block's lines asked for at once (one ask a step: 79-86% of a plain read against
    // 94-107%, decode_layers_bench -t 1, stop 38; x86/packed_tiles.h kDecodeRunBytes).
    ahead.upto(blk + L::kBlockBytes);
    __m512i sumi[T], summ[T];
    for (int j = 0; j < T; ++j) sumi[j] = summ[j] = _mm512_setzero_si512();
    if constexpr (L::kMins) {  // Q2_K's mins term first (the mins lead the block)
      __m512i mp[8];
      for (int k = 0; k < 8; ++k) mp[k] = min_pair(blk, k);
#pragma GCC unroll 8
      for (int j = 0; j < T; ++j) summ[j] = mins_term(mp, a[j][b]);
    }
    for (int c = 0; c < 8; ++c) {
#pragma GCC unroll 2
      for (int half = 0; half < 2; ++half) {  // sub-block 2c + half: groups 2 half, 2 half + 1
        const int sb = 2 * c + half;
        __m512i plo[T], phi[T];
        for (int j = 0; j < T; ++j) plo[j] = phi[j] = _mm512_setzero_si512();
#pragma GCC unroll 2
        for (int grp = 2 * half; grp < 2 * half + 2; ++grp) {
          __m512i lo, hi;
          L::codes(blk, c, grp, lo, hi);
#pragma GCC unroll 8
          for (int j = 0; j < T; ++j) {
            const int8_t* q = a[j][b].qs + 32 * c + 8 * grp;
            plo[j] = _mm512_dpbusd_epi32(plo[j], lo, broadcast4_x16(q));
            phi[j] = _mm512_dpbusd_epi32(phi[j], hi, broadcast4_x16(q + 4));
          }
        }
        const __m512i sc = L::scales(blk, c, half);
#pragma GCC unroll 8
        for (int j = 0; j < T; ++j) {
          __m512i dot = _mm512_add_epi32(plo[j], phi[j]);
          if constexpr (!L::kMins) {  // the offset term (Sums: negative already)
            dot = _mm512_add_epi32(dot,
                                   _mm512_set1_epi32(ts[L::Sums::kPerBlock * (j * nb + b) + sb]));
          }
          sumi[j] = _mm512_add_epi32(sumi[j], _mm512_mullo_epi32(dot, sc));
        }
      }
    }
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk)));
#pragma GCC unroll 8
    for (int j = 0; j < T; ++j) {
      const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(td[j * nb + b]));
      acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sumi[j]), scale, acc[j]);
    }
    if constexpr (L::kMins) {
      const __m512 dminw =
          _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 32)));
#pragma GCC unroll 8
      for (int j = 0; j < T; ++j) {
        const __m512 scale = _mm512_mul_ps(dminw, _mm512_set1_ps(td[j * nb + b]));
        acc[j] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(summ[j]), scale, acc[j]);
      }
    }
  }
  for (int j = 0; j < T; ++j) _mm512_mask_storeu_ps(g.y + (t + j) * g.y_stride + r, m, acc[j]);
}

template <class L>
void gemm_packed_kx16(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  static thread_local Q8KTerms<typename L::Sums> terms;
  constexpr int kSums = L::Sums::kPerBlock;
  terms.make(g, t0, t1);
  const int64_t nb = g.n / kQK_K;
  const bool prefetch = t1 - t0 == 1 && decode_prefetch();
  const bool wide = decode_wide();
  avx2::for_each_panel_tile<kQ6_Kx16PanelRows, kTokenTile>(
      g, r0, r1, t0, t1, [&]<int T>(const uint8_t* panel, int64_t r, int64_t t) {
        const int64_t k = (t - t0) * nb;
        if (T == 1 && wide) {
          decode_panel<L>(g, panel, r, r1, t, terms.d() + k, terms.sums() + kSums * k, nb,
                          prefetch);
        } else {
          panel_tile<L, T>(g, panel, r, r1, t, terms.d() + k, terms.sums() + kSums * k, nb,
                           prefetch);
        }
      });
}

}  // namespace

void fill_avx512_packed_q2_q3_q6_k(KernelTable& t) {
  set_packed_x16(t.types[static_cast<uint32_t>(DType::kQ6_K)].packed, q6_kx16_panel_bytes,
                 pack_q6_kx16, gemm_packed_kx16<Q6Kx16>);
  set_packed_x16(t.types[static_cast<uint32_t>(DType::kQ3_K)].packed, q3_kx16_panel_bytes,
                 pack_q3_kx16, gemm_packed_kx16<Q3Kx16>);
  set_packed_x16(t.types[static_cast<uint32_t>(DType::kQ2_K)].packed, q2_kx16_panel_bytes,
                 pack_q2_kx16, gemm_packed_kx16<Q2Kx16>);
}

}  // namespace cohort::kernels
