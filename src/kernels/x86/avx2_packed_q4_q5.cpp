// AVX2 products of packed Q4_0, Q4_1, Q5_0 and Q5_1 panels (kernels/packed_layouts.h
// Block32Panel: 8 rows, the rows in the 8 int32 lanes) with Q8_0 activations (Q4_0, Q5_0) or
// Q8_1 (Q4_1, Q5_1): decode and prefill alike. Per block of a panel, the 4 nibble groups unpack
// once for a tile of up to 4 tokens (Q5: each nibble with its fifth bit moved up to bit 4);
// each token broadcasts 4 bytes of its activations at a time against all 8 rows, so one maddubs
// does 32 multiplies of 8 rows where the row-major tiles needed a horizontal sum per row at the
// end and a scale conversion per row and block. sum (q - 8) a = sum q a - 8 sum a (Q5_0: 16):
// the second term is one integer per token block, taken once per call; Q4_1's and Q5_1's mins
// meet the Q8_1 block's s = d_a sum a instead. Decode (one token) runs one or two panels at a
// time instead (decode_panels). On a CPU with VNNI a VNNI table (avx2_vnni, avx2_vnni_evex) runs
// the same tiles with vpdpbusd (their kDot).
//
// Exactness and determinism: per block, each int16 chain of the maddubs path adds at most 16
// products of a code and an activation byte (Q4's codes <= 15, 16 x 15 x 128 <= 30720; Q5's <=
// 31 take two chains of 8: <= 31744), then int32; the block's integer dot is exact. A (row,
// token) pair then has one float accumulator, updated block by block in order with
// fma(float(dot - bias sum a), d_w * d_a) or, with mins, fma(float(dot), d_w * d_a) and then
// fma(m_w, s_a): the same operations in every tile, so a row's bits do not depend on its
// panel's other rows, the token tile, or the split of panels between threads.
#include <algorithm>
#include <vector>

#include "kernels/packed_layouts.h"
#include "kernels/registry.h"
#include "kernels/x86/packed_tiles.h"
#include "kernels/x86/simd_avx2.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

// Tokens per tile: 4 (kernels_bench gemm_packed 256 x 2048 x 128, one thread: 4 tokens 195
// GFLOP/s, 5 tokens 193, 6 tokens 122 (out of registers)).
constexpr int kTokenTile = 4;

// Per token block, what the tiles take from the activations besides their codes.
struct TokenBlockTerms {
  std::vector<float> d;         // the block's scale, as a float
  std::vector<int32_t> offset;  // Q4_0, Q5_0: the codes' bias (8, 16) x the sum of its codes
  std::vector<float> s;         // Q4_1, Q5_1: the Q8_1 block's s (d x the sum of its codes)
  TermsKey key;                 // what they were made from
};

// Terms of tokens [t0, t1) (token t's blocks at (t - t0) * nb) for layout L, into per-thread
// storage grown to the largest call seen: no allocation once warm; those of the last call
// when it read the same activations (TermsKey: a product cut into chunks makes them once per
// thread).
template <class L>
const TokenBlockTerms& token_terms(const GemmArgs& g, int64_t t0, int64_t t1) {
  thread_local TokenBlockTerms terms;
  if (!terms.key.fresh(g, t0, t1)) return terms;
  const int64_t nb = g.n / kQK;
  const size_t need = static_cast<size_t>((t1 - t0) * nb);
  if (terms.d.size() < need) {
    terms.d.resize(need);
    terms.offset.resize(L::kMin ? 0 : need);
    terms.s.resize(L::kMin ? need : 0);
  }
  constexpr int32_t kBias = L::kFive ? 16 : 8;
  const __m256i ones8 = _mm256_set1_epi8(1);
  for (int64_t t = t0; t < t1; ++t) {
    const auto* a = reinterpret_cast<const typename L::ActBlock*>(static_cast<const uint8_t*>(g.a) +
                                                                  t * g.a_stride);
    for (int64_t b = 0; b < nb; ++b) {
      const size_t i = static_cast<size_t>((t - t0) * nb + b);
      terms.d[i] = avx2::f16_to_f32(a[b].d);
      if constexpr (L::kMin) {
        terms.s[i] = avx2::f16_to_f32(a[b].s);
      } else {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[b].qs));
        terms.offset[i] = kBias * avx2::hsum_i32(avx2::dot_u8_s8_i32(ones8, q));
      }
    }
  }
  return terms;
}

// Nibble group grp of a block: 32 bytes, 4 columns x 8 rows in each nibble half.
template <class L>
inline __m256i load_group(const uint8_t* blk, int grp) {
  __m256i v = _mm256_loadu_si256(
      reinterpret_cast<const __m256i*>(blk + L::kCodesAt + L::kGroupBytes * grp));
  avx2::keep_in_register(v);  // else GCC loads v once per use: two loads where one does
  return v;
}

// A block's fifth bits (Q5 layouts; zero for Q4's, unused).
template <class L>
inline __m256i load_fifth(const uint8_t* blk) {
  if constexpr (L::kFive) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + L::kFifthAt));
  } else {
    return _mm256_setzero_si256();
  }
}

// Group grp's fifth bits moved to bit 4 of each byte (packed_layouts.h Block32Panel): the low
// nibbles' columns from bit grp, the high nibbles' from bit 4 + grp.
inline void add_fifth_bits(__m256i fifth, int grp, __m256i& lo, __m256i& hi) {
  const __m256i bit4 = _mm256_set1_epi8(0x10);
  lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi32(fifth, 4 - grp), bit4));
  hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_srli_epi32(fifth, grp), bit4));
}

// Nibble group grp of a block as its low and high codes (Q5: with their fifth bits).
template <class L>
inline void unpack_group(const uint8_t* blk, int grp, __m256i fifth, __m256i low, __m256i& lo,
                         __m256i& hi) {
  const __m256i v = load_group<L>(blk, grp);
  lo = _mm256_and_si256(v, low);
  hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
  if constexpr (L::kFive) add_fifth_bits(fifth, grp, lo, hi);
}

// s + a group's codes times a token's activation bytes (q_lo against lo, q_hi against hi,
// each 4 bytes broadcast): int32 lane sums with kVnni, else int16 maddubs pair sums.
template <avx2::Dot kDot>
inline void add_group(__m256i& s, __m256i lo, __m256i hi, __m256i q_lo, __m256i q_hi) {
  if constexpr (kDot != avx2::Dot::kMaddubs) {
    s = avx2::dpbusd<kDot>(s, lo, q_lo);
    s = avx2::dpbusd<kDot>(s, hi, q_hi);
  } else {
    s = _mm256_add_epi16(s, _mm256_maddubs_epi16(lo, q_lo));
    s = _mm256_add_epi16(s, _mm256_maddubs_epi16(hi, q_hi));
    avx2::keep_in_register(s);
  }
}

// Block b's integer dot (8 rows) into the rows' float sums (the contract above); its scales
// (and mins) at blk, the token's terms at index i of terms.
template <class L>
inline __m256 add_block(__m256 acc, __m256i dot, const uint8_t* blk, const TokenBlockTerms& terms,
                        size_t i) {
  const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk)));
  if constexpr (!L::kMin) dot = _mm256_sub_epi32(dot, _mm256_set1_epi32(terms.offset[i]));
  acc =
      _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(dw, _mm256_set1_ps(terms.d[i])), acc);
  if constexpr (L::kMin) {
    const __m256 mw =
        _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + L::kMinsAt)));
    acc = _mm256_fmadd_ps(mw, _mm256_set1_ps(terms.s[i]), acc);
  }
  return acc;
}

// One panel (8 rows at row r) x tokens t .. t + T - 1 (terms of token t from index k). With
// kVnni (a VNNI table: kDot) a block's products go through vpdpbusd, which multiplies a lane's 4
// byte pairs and adds them into int32 in one instruction where maddubs, the int16 add and the
// final madd took three; the block's integer dot is the same exact integer either way, so the
// float operations and every result's bits are the same. One or two tokens then keep two
// int32 chains per token, so that a block's 8 vpdpbusd do not wait on each other's latency;
// Q5's maddubs path keeps two int16 chains (groups 0, 2 and 1, 3) to stay within int16.
template <class L, int T, avx2::Dot kDot>
inline void panel_tile(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                       const TokenBlockTerms& terms, size_t k, int64_t nb) {
  constexpr bool kVnni = kDot != avx2::Dot::kMaddubs;
  constexpr int kChains = (kVnni && T <= 2) || (!kVnni && L::kFive) ? 2 : 1;
  const typename L::ActBlock* a[T];
  for (int j = 0; j < T; ++j) {
    a[j] = reinterpret_cast<const typename L::ActBlock*>(static_cast<const uint8_t*>(g.a) +
                                                         (t + j) * g.a_stride);
  }
  const int64_t rows = std::min<int64_t>(L::kRows, r1 - r);
  __m256 acc[T];
  for (int j = 0; j < T; ++j) acc[j] = avx2::start_rows(g, g.y + (t + j) * g.y_stride + r, rows);
  const __m256i low = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = panel + b * L::kBlockBytes;
    const __m256i fifth = load_fifth<L>(blk);
    // Per token: int16 sums of maddubs pairs, or with kVnni int32 lane sums.
    __m256i sum[T][kChains];
    for (int j = 0; j < T; ++j) {
      for (int c = 0; c < kChains; ++c) sum[j][c] = _mm256_setzero_si256();
    }
#pragma GCC unroll 4
    for (int grp = 0; grp < 4; ++grp) {
      __m256i lo, hi;
      unpack_group<L>(blk, grp, fifth, low, lo, hi);
#pragma GCC unroll 4
      for (int j = 0; j < T; ++j) {
        const int8_t* q = a[j][b].qs + 8 * grp;
        add_group<kDot>(sum[j][grp % kChains], lo, hi, avx2::broadcast4(q),
                        avx2::broadcast4(q + 4));
      }
    }
#pragma GCC unroll 4
    for (int j = 0; j < T; ++j) {
      __m256i dot = kVnni ? sum[j][0] : _mm256_madd_epi16(sum[j][0], ones);
      if constexpr (kChains == 2) {
        dot = _mm256_add_epi32(dot, kVnni ? sum[j][1] : _mm256_madd_epi16(sum[j][1], ones));
      }
      acc[j] = add_block<L>(acc[j], dot, blk, terms, k + j * nb + b);
    }
  }
  for (int j = 0; j < T; ++j) avx2::store_rows(g.y + (t + j) * g.y_stride + r, acc[j], rows);
}

// Token t x P panels from panel0 on (rows r ..; the rows from r1 on are not stored): decode,
// one panel or two at a time (for_each_panel_pair says which, and why). Each panel's weights
// are asked for once per line ahead of their reads (LinePrefetcher), once a run of blocks
// (for_each_block_run: stop 46, 1B tg64 --isa avx2 on 2 threads, 71-73 -> 73-79 tok/s). With
// kVnni each panel keeps its low-nibble and high-nibble products in two int32 chains, so that
// a block's 8 vpdpbusd do not wait on each other, and Q4 takes the high nibbles in place (v & 0xF0,
// 16 x the code) rather than shifted down: one shift per block (the chain's sum / 16, exact, as it
// is a multiple of 16) instead of one per nibble group. Zen 4 VM, kernels_bench q4_0 256 x
// 2048 x 1 in L2, one thread: one chain 37.1-37.5 GB/s, two 39.4-41.1, one load per group (not
// one per use: keep_in_register) 41.5-43.8, in-place high nibbles 46.6-47.4. Each panel's
// block dot is the same exact integer as panel_tile's, then the same float operations, so the
// bits are panel_tile's.
template <int P, class L, avx2::Dot kDot>
void decode_panels(const GemmArgs& g, const uint8_t* panel0, int64_t r, int64_t r1, int64_t t,
                   const TokenBlockTerms& terms, int64_t nb) {
  constexpr bool kVnni = kDot != avx2::Dot::kMaddubs;
  constexpr int kChains = kVnni || L::kFive ? 2 : 1;
  const auto* a = reinterpret_cast<const typename L::ActBlock*>(static_cast<const uint8_t*>(g.a) +
                                                                t * g.a_stride);
  __m256 acc[P];
  for (int p = 0; p < P; ++p) {
    const int64_t first = r + p * L::kRows;
    acc[p] =
        avx2::start_rows(g, g.y + t * g.y_stride + first, std::min<int64_t>(L::kRows, r1 - first));
  }
  avx2::PanelPrefetchers<P> ahead(panel0, g.w_stride);
  const __m256i low = _mm256_set1_epi8(0x0F), high = _mm256_set1_epi8(static_cast<char>(0xF0)),
                ones = _mm256_set1_epi16(1);
  const auto block = [&](int64_t b) __attribute__((always_inline)) {
    const uint8_t* blk[P];
    __m256i sum[P][kChains], fifth[P];
#pragma GCC unroll 2
    for (int p = 0; p < P; ++p) {
      blk[p] = panel0 + p * g.w_stride + b * L::kBlockBytes;
      for (int c = 0; c < kChains; ++c) sum[p][c] = _mm256_setzero_si256();
      fifth[p] = load_fifth<L>(blk[p]);
    }
#pragma GCC unroll 4
    for (int grp = 0; grp < 4; ++grp) {
      const int8_t* q = a[b].qs + 8 * grp;
      const __m256i q_lo = avx2::broadcast4(q), q_hi = avx2::broadcast4(q + 4);
#pragma GCC unroll 2
      for (int p = 0; p < P; ++p) {
        if constexpr (kVnni && !L::kFive) {
          const __m256i v = load_group<L>(blk[p], grp);
          sum[p][0] = avx2::dpbusd<kDot>(sum[p][0], _mm256_and_si256(v, low), q_lo);
          sum[p][1] = avx2::dpbusd<kDot>(sum[p][1], _mm256_and_si256(v, high), q_hi);
        } else {
          __m256i lo, hi;
          unpack_group<L>(blk[p], grp, fifth[p], low, lo, hi);
          if constexpr (kVnni) {
            sum[p][0] = avx2::dpbusd<kDot>(sum[p][0], lo, q_lo);
            sum[p][1] = avx2::dpbusd<kDot>(sum[p][1], hi, q_hi);
          } else {
            // The first groups start the chains: no add of zero.
            const __m256i m =
                _mm256_add_epi16(_mm256_maddubs_epi16(lo, q_lo), _mm256_maddubs_epi16(hi, q_hi));
            sum[p][grp % kChains] = grp < kChains ? m : _mm256_add_epi16(sum[p][grp % kChains], m);
            avx2::keep_in_register(sum[p][grp % kChains]);
          }
        }
      }
    }
#pragma GCC unroll 2
    for (int p = 0; p < P; ++p) {
      __m256i dot;
      if constexpr (kVnni) {
        dot = _mm256_add_epi32(sum[p][0], L::kFive ? sum[p][1] : _mm256_srai_epi32(sum[p][1], 4));
      } else {
        dot = _mm256_madd_epi16(sum[p][0], ones);
        if constexpr (kChains == 2) dot = _mm256_add_epi32(dot, _mm256_madd_epi16(sum[p][1], ones));
      }
      acc[p] = add_block<L>(acc[p], dot, blk[p], terms, static_cast<size_t>(b));
    }
  };
  avx2::for_each_block_run<L::kBlockBytes>(
      nb,
      [&](int64_t end) {
        for (int p = 0; p < P; ++p) ahead.upto(p, panel0 + p * g.w_stride + end * L::kBlockBytes);
      },
      block);
  for (int p = 0; p < P; ++p) {
    const int64_t first = r + p * L::kRows;
    avx2::store_rows(g.y + t * g.y_stride + first, acc[p], std::min<int64_t>(L::kRows, r1 - first));
  }
}

template <class L, avx2::Dot kDot>
void gemm_packed(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const int64_t nb = g.n / kQK;
  const TokenBlockTerms& terms = token_terms<L>(g, t0, t1);
  if (t1 - t0 == 1) {
    avx2::for_each_panel_pair<L::kRows>(g, r0, r1, [&]<int P>(const uint8_t* panel, int64_t r) {
      decode_panels<P, L, kDot>(g, panel, r, r1, t0, terms, nb);
    });
    return;
  }
  avx2::for_each_panel_tile<L::kRows, kTokenTile>(
      g, r0, r1, t0, t1, [&]<int T>(const uint8_t* panel, int64_t r, int64_t t) {
        panel_tile<L, T, kDot>(g, panel, r, r1, t, terms, static_cast<size_t>((t - t0) * nb), nb);
      });
}

// The four types' products with kDot.
template <avx2::Dot kDot>
void set_gemms(KernelTable& t) {
  t.types[static_cast<uint32_t>(DType::kQ4_0)].packed.gemm = gemm_packed<Q4_0Panel<8>, kDot>;
  t.types[static_cast<uint32_t>(DType::kQ4_1)].packed.gemm = gemm_packed<Q4_1Panel<8>, kDot>;
  t.types[static_cast<uint32_t>(DType::kQ5_0)].packed.gemm = gemm_packed<Q5_0Panel<8>, kDot>;
  t.types[static_cast<uint32_t>(DType::kQ5_1)].packed.gemm = gemm_packed<Q5_1Panel<8>, kDot>;
}

template <class L>
void set_form(KernelTable& t, DType type) {
  TypeOps::Packed& p = t.types[static_cast<uint32_t>(type)].packed;
  p.panel_rows = L::kRows;
  p.panel_bytes = block32_panel_bytes<L>;
  p.pack_panel = pack_block32_panel<L>;
  p.accumulates = true;
}

}  // namespace

void fill_vnni_packed_q4_q5(KernelTable& t, bool evex) {
  if (evex) {
    set_gemms<avx2::Dot::kVnniEvex>(t);
  } else {
    set_gemms<avx2::Dot::kVnniVex>(t);
  }
}

void fill_avx2_packed_q4_q5(KernelTable& t) {
  set_form<Q4_0Panel<8>>(t, DType::kQ4_0);
  set_form<Q4_1Panel<8>>(t, DType::kQ4_1);
  set_form<Q5_0Panel<8>>(t, DType::kQ5_0);
  set_form<Q5_1Panel<8>>(t, DType::kQ5_1);
  set_gemms<avx2::Dot::kMaddubs>(t);
}

}  // namespace cohort::kernels
