// AVX2 products of the packed K-quant panels (kernels/packed_layouts.h: 8 rows, the rows in
// the 8 int32 lanes) with Q8_K activations, decode and prefill alike.
//
// Q4_Kx8 (and Q5_Kx8, the same tile with each code's fifth bit or-ed in): per sub-block of 32
// columns, each token broadcasts 4 activation bytes at a time against the nibbles of all 8 rows;
// the maddubs results add up in int16, then one madd with the sub-block's scales (each row's scale
// in both int16 halves of its lane) gives scale * dot in int32. The mins term sum_j min_j * bsum_j
// is 4 madds per super-block of the unpacked mins with pairs of the token's sub-block sums. Per
// super-block and token: one fma with d_w * d_a and one with dmin_w * d_a. On a CPU with VNNI a
// VNNI table (avx2_vnni, avx2_vnni_evex) runs the same Q4_K tile with vpdpbusd (k_tile's kDot):
// a sub-block's int32 lane sums take their scale by vpmulld, the same exact integers.
//
// Q6_Kx8, Q3_Kx8 and Q2_Kx8 (16 sub-blocks of 16 columns): q236_k_tile, each group's codes put
// together once for the tile's tokens, their maddubs pairs taking the sub-block's scale by a madd
// at once (one token of Q3_K or Q2_K: one madd for a sub-block's two groups); Q6_K's and Q3_K's
// offsets (-32, -4) and Q2_K's mins are one term per super-block.
//
// Exactness and determinism: in a sub-block each int16 half of a row's lane adds 16 products
// of a code (<= 15) with an activation (|a| <= 128): <= 30720, no overflow (maddubs's own
// pair sums are <= 3840, never saturated). Scales and mins are <= 63, the sub-block sums of
// the activations |bsum| <= 4096: every int32 sum of a super-block is exact. A (row, token)
// pair has one float accumulator, updated super-block by super-block in order by the same
// two fmas in every tile, so a row's bits depend neither on its panel's other rows, nor on
// the token tile, nor on the split of panels between threads.
#include <algorithm>
#include <type_traits>

#include "kernels/packed_layouts.h"
#include "kernels/registry.h"
#include "kernels/x86/packed_tiles.h"
#include "kernels/x86/q8_k_terms.h"
#include "kernels/x86/simd_avx2.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

// What a tile of T tokens reads of them: their activation blocks and their terms (Sums:
// q8_k_terms.h SumsOf32 for Q4_K and Q5_K, SumsOf16 for the others).
template <int T, class Sums>
struct TileTokens {
  static_assert(std::is_same_v<typename Sums::Value, int16_t>, "int16 sums, for madd");
  const BlockQ8_K* a[T];
  const float* d;        // token j's block b at d[j * nb + b]
  const int16_t* sums_;  // token j's block b's at sums(j * nb + b)
  TileTokens(const GemmArgs& g, int64_t t, const Q8KTerms<Sums>& terms, size_t first)
      : d(terms.d() + first), sums_(terms.sums() + Sums::kPerBlock * first) {
    for (int j = 0; j < T; ++j) {
      a[j] = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(g.a) +
                                                (t + j) * g.a_stride);
    }
  }
  const int16_t* sums(int64_t i) const { return sums_ + Sums::kPerBlock * i; }
};

// Q6_K's, Q3_K's and Q2_K's terms: the file's 16 sums of 16 codes, int16 pairs for madd with
// the scales or the mins.
using Bsums16 = SumsOf16<int16_t, 1>;

// The two layouts' sub-blocks (packed_layouts.h KQuantSubBlocks).
using Q4Kx8 = KQuantSubBlocks<kQ4_KPanelRows, false>;
using Q5Kx8 = KQuantSubBlocks<kQ4_KPanelRows, true>;

// P Q4_Kx8 or Q5_Kx8 panels (layout L; 8 rows each from row r) x tokens t .. t + T - 1 (their
// terms from index first). With kVnni (a VNNI table: kDot) a sub-block's products go through
// vpdpbusd into int32 lane sums (two chains for one or two tokens: its latency is longer than
// the add's), which take the sub-block's scale by an int32 multiply: the same exact integer as
// the int16 sums and madd, so the same bits. Q5_K's codes (<= 31) take the maddubs path's low
// and high halves in two int16 chains (8 products of <= 31 * 128 each: <= 31744, no overflow).
template <class L, int T, int P, avx2::Dot kDot>
void k_tile(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
            const Q8KTerms<SumsOf32>& terms, size_t first, int64_t nb) {
  static_assert(P == 1 || T == 1, "several panels for one token only");
  constexpr bool kVnni = kDot != avx2::Dot::kMaddubs;
  constexpr int kChains = (kVnni && T <= 2) || (!kVnni && L::kFive) ? 2 : 1;
  // With two chains the second holds the high nibbles' products: Q4_K's taken in place (v &
  // 0xF0, 16 x the code) need no shift per group, only one per sub-block (an exact division,
  // the chain's sum being a multiple of 16). The same exact integers, so the same bits.
  constexpr bool kInPlaceHigh = kChains == 2 && !L::kFive;
  const __m256i bit4 = _mm256_set1_epi8(0x10);
  const TileTokens<T, SumsOf32> tok(g, t, terms, first);
  __m256 acc[P][T];
  avx2::start_tile<P, T>(g, acc, r, r1, t);
  const __m256i low = _mm256_set1_epi8(0x0F), high = _mm256_set1_epi8(static_cast<char>(0xF0));
  // Row i's scale byte (of the 8 broadcast to both halves) into both int16 halves of lane i.
  const __m256i scale_pairs =
      _mm256_setr_epi8(0, -1, 0, -1, 1, -1, 1, -1, 2, -1, 2, -1, 3, -1, 3, -1,  //
                       4, -1, 4, -1, 5, -1, 5, -1, 6, -1, 6, -1, 7, -1, 7, -1);
  avx2::PanelPrefetchers<P> ahead(panel, g.w_stride);  // one token: the weights stream
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk[P];
    __m256i sumi[P][T];
    for (int p = 0; p < P; ++p) {
      blk[p] = panel + p * g.w_stride + b * L::kBlockBytes;
      if constexpr (T == 1) ahead.upto(p, blk[p] + L::kQsOffset);
      for (int j = 0; j < T; ++j) sumi[p][j] = _mm256_setzero_si256();
    }
    for (int sb = 0; sb < 8; ++sb) {
      // Per panel and token: int16 sums of maddubs pairs, or with kVnni int32 lane sums.
      __m256i part[P][T][kChains];
#pragma GCC unroll 2
      for (int p = 0; p < P; ++p) {
        if constexpr (T == 1) ahead.upto(p, blk[p] + L::kQsOffset + L::kSubBytes * (sb + 1));
        for (int j = 0; j < T; ++j) {
          for (int c = 0; c < kChains; ++c) part[p][j][c] = _mm256_setzero_si256();
        }
      }
      // Q5_K: the sub-block's fifth bits, per panel.
      __m256i fifth[P];
#pragma GCC unroll 2
      for (int p = 0; p < P; ++p) {
        const uint8_t* sub = blk[p] + L::kQsOffset + L::kSubBytes * sb;
        fifth[p] = L::kFive ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sub))
                            : _mm256_setzero_si256();
      }
#pragma GCC unroll 4
      for (int grp = 0; grp < 4; ++grp) {
#pragma GCC unroll 2
        for (int p = 0; p < P; ++p) {
          __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
              blk[p] + L::kQsOffset + L::kSubBytes * sb + L::kCodesAt + 32 * grp));
          avx2::keep_in_register(v);  // one load, not one per use
          __m256i lo = _mm256_and_si256(v, low);
          // kInPlaceHigh: 16 x the high codes, their chain divided by 16 per sub-block.
          __m256i hi = kInPlaceHigh ? _mm256_and_si256(v, high)
                                    : _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
          if constexpr (L::kFive) {
            // Group grp's fifth bits to bit 4 of each byte (packed_layouts.h Q5_Kx8): the low
            // nibbles' columns from bit grp, the high nibbles' from bit 4 + grp.
            const __m256i up = _mm256_sll_epi32(fifth[p], _mm_cvtsi32_si128(4 - grp));
            const __m256i down = _mm256_srl_epi32(fifth[p], _mm_cvtsi32_si128(grp));
            lo = _mm256_or_si256(lo, _mm256_and_si256(up, bit4));
            hi = _mm256_or_si256(hi, _mm256_and_si256(down, bit4));
          }
#pragma GCC unroll 4
          for (int j = 0; j < T; ++j) {
            const int8_t* q = tok.a[j][b].qs + 32 * sb + 8 * grp;
            __m256i(&pj)[kChains] = part[p][j];
            if constexpr (kVnni) {
              pj[0] = avx2::dpbusd<kDot>(pj[0], lo, avx2::broadcast4(q));
              pj[kChains - 1] = avx2::dpbusd<kDot>(pj[kChains - 1], hi, avx2::broadcast4(q + 4));
            } else {
              pj[0] = _mm256_add_epi16(pj[0], _mm256_maddubs_epi16(lo, avx2::broadcast4(q)));
              pj[kChains - 1] = _mm256_add_epi16(pj[kChains - 1],
                                                 _mm256_maddubs_epi16(hi, avx2::broadcast4(q + 4)));
              avx2::keep_in_register(pj[0]);
            }
          }
        }
      }
#pragma GCC unroll 2
      for (int p = 0; p < P; ++p) {
        const uint8_t* scales = blk[p] + kQ4_Kx8ScalesOffset + 8 * sb;
        if constexpr (kVnni) {
          const __m256i sc =
              _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales)));
#pragma GCC unroll 4
          for (int j = 0; j < T; ++j) {
            __m256i dot = part[p][j][0];
            if constexpr (kInPlaceHigh) {
              dot = _mm256_add_epi32(dot, _mm256_srai_epi32(part[p][j][1], 4));
            } else if constexpr (kChains == 2) {
              dot = _mm256_add_epi32(dot, part[p][j][1]);
            }
            sumi[p][j] = _mm256_add_epi32(sumi[p][j], _mm256_mullo_epi32(dot, sc));
          }
        } else {
          int64_t scales8;
          __builtin_memcpy(&scales8, scales, 8);
          const __m256i sc = _mm256_shuffle_epi8(_mm256_set1_epi64x(scales8), scale_pairs);
#pragma GCC unroll 4
          for (int j = 0; j < T; ++j) {
            sumi[p][j] = _mm256_add_epi32(sumi[p][j], _mm256_madd_epi16(part[p][j][0], sc));
            if constexpr (kChains == 2) {
              sumi[p][j] = _mm256_add_epi32(sumi[p][j], _mm256_madd_epi16(part[p][j][1], sc));
            }
          }
        }
      }
    }
#pragma GCC unroll 2
    for (int p = 0; p < P; ++p) {
      __m256i mins[4];
      for (int k = 0; k < 4; ++k) {
        mins[k] = _mm256_cvtepu8_epi16(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk[p] + kQ4_Kx8MinsOffset + 16 * k)));
      }
      const __m256 dw = avx2::load_f16x8(reinterpret_cast<const uint16_t*>(blk[p]));
      const __m256 dminw = avx2::load_f16x8(reinterpret_cast<const uint16_t*>(blk[p]) + 8);
#pragma GCC unroll 4
      for (int j = 0; j < T; ++j) {
        const int16_t* s = tok.sums(j * nb + b);
        __m256i summ = _mm256_madd_epi16(mins[0], avx2::broadcast4(s));
        for (int k = 1; k < 4; ++k) {
          summ = _mm256_add_epi32(summ, _mm256_madd_epi16(mins[k], avx2::broadcast4(s + 2 * k)));
        }
        const __m256 da = _mm256_set1_ps(tok.d[j * nb + b]);
        __m256& y = acc[p][j];
        y = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi[p][j]), _mm256_mul_ps(dw, da), y);
        y = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(summ), _mm256_mul_ps(dminw, da), y);
      }
    }
  }
  avx2::store_tile<P, T>(g, acc, r, r1, t);
}

// How far ahead a one-token Q6_Kx8 tile asks for its lines (once each: LinePrefetcher): two
// super-blocks. Stop 18 measured this distance best (1B Q6_K tg64 on the Xeon VM, 2 threads
// 24.8, 23.2 -> 28.6, 28.3 tok/s against 1024 bytes) when a block kept its ql and qh bytes
// 1024 apart; since stop 20 a block is one sequential stream (packed_layouts.h), which on
// the Zen 4 VM took one thread out of cache from 9 to 21-23 GB/s (kernels_bench 32768 x 4096
// x 1) and 1B tg64 on 2 threads from 20 to 35-54 tok/s.
constexpr int64_t kQ6_KDecodeAhead = 2 * kQ6_Kx8BlockBytes;

// Group grp's 6-bit codes of a Q6_Kx8 chunk (its ql and qh bytes) for 8 rows: the low
// nibbles' columns in lo, the high nibbles' in hi, each code in a byte.
inline void codes6_x8(const uint8_t* ql, const uint8_t* qh, int grp, __m256i& lo, __m256i& hi) {
  const __m256i low = _mm256_set1_epi8(0x0F), top = _mm256_set1_epi8(0x30);
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32 * grp));
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh + 32 * (grp / 2)));
  // The plane's 2-bit fields of this group, moved to bits 4..5 of each byte.
  const __m256i h_lo = grp % 2 ? h : _mm256_slli_epi16(h, 4);
  const __m256i h_hi = grp % 2 ? _mm256_srli_epi16(h, 2) : _mm256_slli_epi16(h, 2);
  lo = _mm256_or_si256(_mm256_and_si256(v, low), _mm256_and_si256(h_lo, top));
  hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), low), _mm256_and_si256(h_hi, top));
}

// Group G's 3-bit codes of a Q3_Kx8 chunk for 8 rows, as codes6_x8 gives Q6_K's (the bits as
// packed_layouts.h Q3_Kx16 describes; the epi16 shifts bring into a byte's bits 0..2 only that
// byte's own bits).
template <int G>
inline void codes3_x8(const uint8_t* ql, const uint8_t* qh, __m256i& lo, __m256i& hi) {
  const __m256i two = _mm256_set1_epi8(0x03), bit2 = _mm256_set1_epi8(0x04);
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32 * (G / 2)));
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
  constexpr int kLow = 4 * (G % 2);
  const __m256i h_lo = G == 0 ? _mm256_slli_epi16(h, 2) : _mm256_srli_epi16(h, 2 * G - 2);
  const __m256i h_hi = G == 0 ? _mm256_slli_epi16(h, 1) : _mm256_srli_epi16(h, 2 * G - 1);
  lo = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, kLow), two),
                       _mm256_and_si256(h_lo, bit2));
  hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, kLow + 2), two),
                       _mm256_and_si256(h_hi, bit2));
}

// Row i's int8 scale of sub-block 2c + s of a Q6_Kx8 or Q3_Kx8 scale table (byte 2i + s of
// the 16 of pair c) in both int16 halves of lane i, sc[0] and sc[1] for s = 0, 1: the pair's
// bytes broadcast to both halves, byte 2i + s shuffled into the high byte of each int16 half,
// and an arithmetic shift by 8 to sign-extend it.
inline void int8_scale_pairs(const uint8_t* table, int c, __m256i sc[2]) {
  const __m256i pick[2] = {
      _mm256_setr_epi8(0, 0, 0, 0, 2, 2, 2, 2, 4, 4, 4, 4, 6, 6, 6, 6,  //
                       8, 8, 8, 8, 10, 10, 10, 10, 12, 12, 12, 12, 14, 14, 14, 14),
      _mm256_setr_epi8(1, 1, 1, 1, 3, 3, 3, 3, 5, 5, 5, 5, 7, 7, 7, 7,  //
                       9, 9, 9, 9, 11, 11, 11, 11, 13, 13, 13, 13, 15, 15, 15, 15)};
  const __m256i pair = _mm256_broadcastsi128_si256(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * c)));
  sc[0] = _mm256_srai_epi16(_mm256_shuffle_epi8(pair, pick[0]), 8);
  sc[1] = _mm256_srai_epi16(_mm256_shuffle_epi8(pair, pick[1]), 8);
}

// Row i's byte of pair k of a Q2_Kx8 nibble table (8 bytes at table + 8k) in both int16 halves
// of lane i (the other byte zero).
inline __m256i q2_pair_bytes(const uint8_t* table, int k) {
  int64_t bytes;
  __builtin_memcpy(&bytes, table + 8 * k, 8);
  const __m256i pick = _mm256_setr_epi8(0, -1, 0, -1, 1, -1, 1, -1, 2, -1, 2, -1, 3, -1, 3, -1,  //
                                        4, -1, 4, -1, 5, -1, 5, -1, 6, -1, 6, -1, 7, -1, 7, -1);
  return _mm256_shuffle_epi8(_mm256_set1_epi64x(bytes), pick);
}

// Q2_Kx8's codes of group G of chunk c (packed_layouts.h Q2KPanel): columns 8G + m (lo, plane 0)
// and 8G + 4 + m (hi, plane 1) at bits 2G of each byte, shifted down (the epi16 shift brings
// into a byte's bits 0..1 only that byte's own bits).
template <int G>
inline void codes2_x8(const uint8_t* blk, int c, __m256i& lo, __m256i& hi) {
  using P = Q2KPanel<8>;
  const __m256i two = _mm256_set1_epi8(0x03);
  const __m256i vl =
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + P::plane_offset(c, 0)));
  const __m256i vh =
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + P::plane_offset(c, 1)));
  lo = _mm256_and_si256(G ? _mm256_srli_epi16(vl, 2 * G) : vl, two);
  hi = _mm256_and_si256(G ? _mm256_srli_epi16(vh, 2 * G) : vh, two);
}

// The three 8-row layouts of 16 sub-blocks of 16: a block's bytes, where chunk c's codes start
// (step: what a one-token tile asks for ahead), its two sub-blocks' scales in the int16 halves
// of each row's lane, how its group's codes come together, and the codes' offset (2^kShift x the
// sub-block sums, Q6_K and Q3_K, whose int8 scales sit in one table) or the mins (kMins: Q2_K).
struct Q6Kx8 {
  static constexpr size_t kBlockBytes = kQ6_Kx8BlockBytes;
  static constexpr int kMaxCode = 63;
  static constexpr int kShift = 5;
  static constexpr bool kMins = false;
  static constexpr size_t step(int c) { return q6_kx8_step(c); }
  static void scales(const uint8_t* blk, int c, __m256i sc[2]) {
    int8_scale_pairs(blk + kQ6_Kx8ScalesOffset, c, sc);
  }
  static void codes(const uint8_t* blk, int c, int grp, __m256i& lo, __m256i& hi) {
    codes6_x8(blk + step(c), blk + step(c) + kQ6_Kx8QhInStep, grp, lo, hi);
  }
};
struct Q3Kx8 {
  static constexpr size_t kBlockBytes = kQ3_Kx8BlockBytes;
  static constexpr int kMaxCode = 7;
  static constexpr int kShift = 2;
  static constexpr bool kMins = false;
  static constexpr size_t step(int c) { return q3_kx8_step(c); }
  static void scales(const uint8_t* blk, int c, __m256i sc[2]) {
    int8_scale_pairs(blk + kQ3_Kx8ScalesOffset, c, sc);
  }
  static void codes(const uint8_t* blk, int c, int grp, __m256i& lo, __m256i& hi) {
    const uint8_t* ql = blk + step(c);
    const uint8_t* qh = ql + kQ3_Kx8QhInStep;
    switch (grp) {  // a constant where the tile's unrolled loop calls it
      case 0:
        codes3_x8<0>(ql, qh, lo, hi);
        break;
      case 1:
        codes3_x8<1>(ql, qh, lo, hi);
        break;
      case 2:
        codes3_x8<2>(ql, qh, lo, hi);
        break;
      default:
        codes3_x8<3>(ql, qh, lo, hi);
        break;
    }
  }
};
static_assert(kQ3_Kx8ScalesOffset == kQ6_Kx8ScalesOffset &&
                  kQ3_Kx8StepsOffset == kQ6_Kx8StepsOffset,
              "one scale table and the chunks after it in both");
struct Q2Kx8 {
  using P = Q2KPanel<8>;
  static constexpr size_t kBlockBytes = P::kBlockBytes;
  static constexpr int kMaxCode = 3;
  static constexpr bool kMins = true;  // no offset, so no kShift
  static constexpr size_t step(int c) { return P::plane_offset(c, 0); }
  static void scales(const uint8_t* blk, int c, __m256i sc[2]) {
    const __m256i both = q2_pair_bytes(blk + P::kScalesOffset, c);
    sc[0] = _mm256_and_si256(both, _mm256_set1_epi16(0x0F));
    sc[1] = _mm256_srli_epi16(both, 4);
  }
  // Pair k's mins as the int16 pair of each row's lane (low half 2k, high half 2k + 1).
  static __m256i min_pair(const uint8_t* blk, int k) {
    const __m256i both = q2_pair_bytes(blk + P::kMinsOffset, k);
    return _mm256_blend_epi16(_mm256_and_si256(both, _mm256_set1_epi16(0x0F)),
                              _mm256_srli_epi16(both, 4), 0xAA);
  }
  static void codes(const uint8_t* blk, int c, int grp, __m256i& lo, __m256i& hi) {
    switch (grp) {  // a constant where the tile's unrolled loop calls it
      case 0:
        codes2_x8<0>(blk, c, lo, hi);
        break;
      case 1:
        codes2_x8<1>(blk, c, lo, hi);
        break;
      case 2:
        codes2_x8<2>(blk, c, lo, hi);
        break;
      default:
        codes2_x8<3>(blk, c, lo, hi);
        break;
    }
  }
};

// P Q6_Kx8, Q3_Kx8 or Q2_Kx8 panels (layout L; 8 rows each from row r) x tokens t .. t + T - 1
// (their terms from index first). Q3_K's codes (u <= 7) stand for u - 4 as Q6_K's for q - 32;
// Q2_K's mins term is 8 madds of a row's mins in pairs with the token's pairs of sub-block sums,
// taken with dmin as Q4_K's is (the AVX-512 tile's integers and float operations, so its bits).
template <class L, int T, int P>
void q236_k_tile(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                 const Q8KTerms<Bsums16>& terms, size_t first, int64_t nb) {
  static_assert(P == 1 || T == 1, "several panels for one token only");
  // Whether a sub-block's two groups add their int16 sums before one madd with its scales
  // (one token only: a prompt tile's 4 tokens keep no register for the first group's sums):
  // 2 groups x 2 maddubs x 2 products of a code and an activation byte (|a| <= 128) must fit
  // int16. Q3_K (codes <= 7: 7168) and Q2_K (<= 3: 3072) do, Q6_K (<= 63) does not.
  constexpr bool kPairGroups = T == 1 && 8 * L::kMaxCode * 128 <= 32767;
  const TileTokens<T, Bsums16> tok(g, t, terms, first);
  __m256 acc[P][T];
  avx2::start_tile<P, T>(g, acc, r, r1, t);
  avx2::PanelPrefetchers<P> ahead(panel, g.w_stride, kQ6_KDecodeAhead);  // one token
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk[P];
    __m256i sumi[P][T];
    for (int p = 0; p < P; ++p) {
      blk[p] = panel + p * g.w_stride + b * L::kBlockBytes;
      if constexpr (T == 1) ahead.upto(p, blk[p] + L::step(0));
      for (int j = 0; j < T; ++j) sumi[p][j] = _mm256_setzero_si256();
    }
    for (int c = 0; c < 8; ++c) {
      __m256i sc[P][2];
#pragma GCC unroll 2
      for (int p = 0; p < P; ++p) {
        if constexpr (T == 1) ahead.upto(p, blk[p] + L::step(c + 1));
        L::scales(blk[p], c, sc[p]);
      }
      __m256i even[P][T];  // kPairGroups: a sub-block's first group's int16 sums
#pragma GCC unroll 4
      for (int grp = 0; grp < 4; ++grp) {
#pragma GCC unroll 2
        for (int p = 0; p < P; ++p) {
          __m256i lo, hi;
          L::codes(blk[p], c, grp, lo, hi);
#pragma GCC unroll 4
          for (int j = 0; j < T; ++j) {
            const int8_t* q = tok.a[j][b].qs + 32 * c + 8 * grp;
            __m256i s16 = _mm256_add_epi16(_mm256_maddubs_epi16(lo, avx2::broadcast4(q)),
                                           _mm256_maddubs_epi16(hi, avx2::broadcast4(q + 4)));
            if constexpr (kPairGroups) {
              if (grp % 2 == 0) {
                even[p][j] = s16;
                continue;
              }
              s16 = _mm256_add_epi16(even[p][j], s16);
            }
            sumi[p][j] = _mm256_add_epi32(sumi[p][j], _mm256_madd_epi16(s16, sc[p][grp / 2]));
            avx2::keep_in_register(sumi[p][j]);
          }
        }
      }
    }
#pragma GCC unroll 2
    for (int p = 0; p < P; ++p) {
      const __m256 dw = avx2::load_f16x8(reinterpret_cast<const uint16_t*>(blk[p]));
      // Per pair k of sub-blocks: Q6_K's and Q3_K's scales (sign-extended), or Q2_K's mins, as
      // the int16 pair of each row's lane.
      __m256i pairs16[8];
      for (int k = 0; k < 8; ++k) {
        if constexpr (L::kMins) {
          pairs16[k] = L::min_pair(blk[p], k);
        } else {
          pairs16[k] = _mm256_cvtepi8_epi16(_mm_loadu_si128(
              reinterpret_cast<const __m128i*>(blk[p] + kQ6_Kx8ScalesOffset + 16 * k)));
        }
      }
#pragma GCC unroll 4
      for (int j = 0; j < T; ++j) {
        // Q6_K: sum (q - 32) a = sum q a - 32 sum a (Q3_K: 4), per sub-block before its scale;
        // Q2_K: sum_j min_j sum_j(a).
        const int16_t* s = tok.sums(j * nb + b);
        __m256i pair_sum = _mm256_madd_epi16(pairs16[0], avx2::broadcast4(s));
        for (int k = 1; k < 8; ++k) {
          pair_sum = _mm256_add_epi32(pair_sum,
                                      _mm256_madd_epi16(pairs16[k], avx2::broadcast4(s + 2 * k)));
        }
        const __m256 da = _mm256_set1_ps(tok.d[j * nb + b]);
        if constexpr (L::kMins) {
          const __m256 dminw = avx2::load_f16x8(reinterpret_cast<const uint16_t*>(blk[p]) + 8);
          acc[p][j] =
              _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi[p][j]), _mm256_mul_ps(dw, da), acc[p][j]);
          acc[p][j] =
              _mm256_fnmadd_ps(_mm256_cvtepi32_ps(pair_sum), _mm256_mul_ps(dminw, da), acc[p][j]);
        } else {
          const __m256i dot = _mm256_sub_epi32(sumi[p][j], _mm256_slli_epi32(pair_sum, L::kShift));
          acc[p][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(dw, da), acc[p][j]);
        }
      }
    }
  }
  avx2::store_tile<P, T>(g, acc, r, r1, t);
}

// Rows [r0, r1) x tokens [t0, t1): one token on two panels at a time, or tiles of up to 4
// tokens per panel. tile.template operator()<T, P> runs T tokens on P panels.
template <class Sums, typename Tile>
void gemm_panels(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1, Tile tile) {
  const int64_t nb = g.n / kQK_K;
  thread_local Q8KTerms<Sums> terms;
  terms.make(g, t0, t1);
  if (t1 - t0 == 1) {
    avx2::for_each_panel_pair<8>(g, r0, r1, [&]<int P>(const uint8_t* panel, int64_t r) {
      tile.template operator()<1, P>(g, panel, r, r1, t0, terms, 0, nb);
    });
    return;
  }
  avx2::for_each_panel_tile<8, 4>(
      g, r0, r1, t0, t1, [&]<int T>(const uint8_t* panel, int64_t r, int64_t t) {
        tile.template operator()<T, 1>(g, panel, r, r1, t, terms,
                                       static_cast<size_t>((t - t0) * nb), nb);
      });
}

template <class L, avx2::Dot kDot>
void gemm_packed_q45_k(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  gemm_panels<SumsOf32>(g, r0, r1, t0, t1,
                        []<int T, int P>(auto&&... args) { k_tile<L, T, P, kDot>(args...); });
}

template <class L>
void gemm_packed_q236_k(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  gemm_panels<Bsums16>(g, r0, r1, t0, t1,
                       []<int T, int P>(auto&&... args) { q236_k_tile<L, T, P>(args...); });
}

}  // namespace

void fill_avx2_packed_k(KernelTable& t) {
  TypeOps::Packed& q4k = t.types[static_cast<uint32_t>(DType::kQ4_K)].packed;
  q4k.panel_rows = kQ4_KPanelRows;
  q4k.panel_bytes = q4_kx8_panel_bytes;
  q4k.pack_panel = pack_q4_kx8;
  q4k.gemm = gemm_packed_q45_k<Q4Kx8, avx2::Dot::kMaddubs>;
  TypeOps::Packed& q5k = t.types[static_cast<uint32_t>(DType::kQ5_K)].packed;
  q5k.panel_rows = kQ4_KPanelRows;
  q5k.panel_bytes = q5_kx8_panel_bytes;
  q5k.pack_panel = pack_q5_kx8;
  q5k.gemm = gemm_packed_q45_k<Q5Kx8, avx2::Dot::kMaddubs>;
  q5k.accumulates = true;
  TypeOps::Packed& q6k = t.types[static_cast<uint32_t>(DType::kQ6_K)].packed;
  q6k.panel_rows = kQ6_KPanelRows;
  q6k.panel_bytes = q6_kx8_panel_bytes;
  q6k.pack_panel = pack_q6_kx8;
  q6k.gemm = gemm_packed_q236_k<Q6Kx8>;
  TypeOps::Packed& q3k = t.types[static_cast<uint32_t>(DType::kQ3_K)].packed;
  q3k.panel_rows = kQ6_KPanelRows;
  q3k.panel_bytes = q3_kx8_panel_bytes;
  q3k.pack_panel = pack_q3_kx8;
  q3k.gemm = gemm_packed_q236_k<Q3Kx8>;
  q3k.accumulates = true;
  TypeOps::Packed& q2k = t.types[static_cast<uint32_t>(DType::kQ2_K)].packed;
  q2k.panel_rows = Q2KPanel<8>::kRows;
  q2k.panel_bytes = q2_kx8_panel_bytes;
  q2k.pack_panel = pack_q2_kx8;
  q2k.gemm = gemm_packed_q236_k<Q2Kx8>;
  q2k.accumulates = true;
  q4k.accumulates = true;
  q6k.accumulates = true;
}

void fill_vnni_packed_k(KernelTable& t, bool evex) {
  t.types[static_cast<uint32_t>(DType::kQ4_K)].packed.gemm =
      evex ? gemm_packed_q45_k<Q4Kx8, avx2::Dot::kVnniEvex>
           : gemm_packed_q45_k<Q4Kx8, avx2::Dot::kVnniVex>;
  t.types[static_cast<uint32_t>(DType::kQ5_K)].packed.gemm =
      evex ? gemm_packed_q45_k<Q5Kx8, avx2::Dot::kVnniEvex>
           : gemm_packed_q45_k<Q5Kx8, avx2::Dot::kVnniVex>;
}

}  // namespace cohort::kernels
