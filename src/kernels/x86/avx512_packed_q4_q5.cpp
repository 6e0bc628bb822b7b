// AVX-512 products of packed Q4_0, Q4_1, Q5_0 and Q5_1 panels of 16 rows (kernels/packed_layouts.h
// Block32Panel, the 16 rows in the 16 int32 lanes of a 512-bit register) with Q8_0 activations
// (Q4_0, Q5_0) or Q8_1 (Q4_1, Q5_1): the avx512_vnni table's. Per block, one 512-bit load holds
// 8 columns of all 16 rows (decode takes it as two 256-bit halves, decode_panel, or where
// kernels::decode_wide() whole, decode_panel_512, its blocks in runs); its low nibbles (v & 0x0F)
// and its high ones (Q4: in place, v & 0xF0, 16 x the code; Q5: shifted down, each nibble with
// its fifth bit moved up) each meet a token's 4 activation bytes broadcast to every lane
// (vpdpbusd's embedded broadcast) in one vpdpbusd. Against the 8-row AVX2 tiles that is half the
// instructions for the same bytes: where a one-token tile computed barely faster than memory
// streams (the Zen 4 VM's 39 GB/s in L2 against 35 from memory on one thread), the gap is what
// keeps decode below the read bandwidth.
//
// Exactness and determinism, as in avx2_packed_q4_q5.cpp, whose bits these are: a block's integer
// dot sum q a (codes <= 31 against |a| <= 128, 32 products) is exact in int32, then per block
// acc = fma(float(dot - bias x sum a), d_w * d_a, acc) (Q4_0: bias 8, Q5_0: 16) or, with mins,
// acc = fma(float(dot), d_w * d_a, acc) then acc = fma(m_w, s_a, acc): each (row, token) pair
// has one float accumulator updated block by block in order.
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

// Tokens per prefill tile: each keeps two int32 sums and a float accumulator in registers.
constexpr int kTokenTile = 6;

// Per token block, what the tiles take besides the codes (from a Q8_0Terms or Q8_1Terms): the
// activations' scale, and bias x the sum of their codes (Q4_0, Q5_0) or s (Q4_1, Q5_1).
struct BlockTerms {
  const float* d = nullptr;
  const int32_t* offset = nullptr;
  const float* s = nullptr;

  BlockTerms from(int64_t k) const {
    return {d + k, offset == nullptr ? nullptr : offset + k, s == nullptr ? nullptr : s + k};
  }
};

template <class L>
using TermsOf = Q8Terms<typename L::ActBlock, L::kFive ? 16 : 8>;

template <class Block, int kBias>
BlockTerms view(const Q8Terms<Block, kBias>& t) {
  return {t.d(), t.offset(), t.s()};
}

// A block's integer dot from its low and high halves' sums: Q4's high codes were taken in place
// (16 x the code, an exact division).
template <class L>
inline __m512i block_dot(__m512i lo, __m512i hi) {
  return _mm512_add_epi32(lo, L::kFive ? hi : _mm512_srai_epi32(hi, 4));
}
template <class L>
inline __m256i block_dot(__m256i lo, __m256i hi) {
  return _mm256_add_epi32(lo, L::kFive ? hi : _mm256_srai_epi32(hi, 4));
}

// A block's 16 row scales (and mins) as floats, loaded once for all of a tile's tokens.
template <class L>
struct RowScales {
  __m512 d, m;
  explicit RowScales(const uint8_t* blk)
      : d(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk)))),
        m(L::kMin ? _mm512_cvtph_ps(
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + L::kMinsAt)))
                  : _mm512_setzero_ps()) {}
};

// Block b's dot (16 rows, scales w) into the rows' float sums (the contract above).
template <class L>
inline __m512 add_block(__m512 acc, __m512i dot, const RowScales<L>& w, const BlockTerms& tt,
                        int64_t b) {
  if constexpr (!L::kMin) dot = _mm512_sub_epi32(dot, _mm512_set1_epi32(tt.offset[b]));
  acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(w.d, _mm512_set1_ps(tt.d[b])), acc);
  if constexpr (L::kMin) acc = _mm512_fmadd_ps(w.m, _mm512_set1_ps(tt.s[b]), acc);
  return acc;
}

// add_block for half h of the rows (8 rows: 0-7 or 8-15) in a 256-bit register.
template <class L>
inline __m256 add_block_half(__m256 acc, __m256i dot, const uint8_t* blk, int h,
                             const BlockTerms& tt, int64_t b) {
  const __m256 dw =
      _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 16 * h)));
  if constexpr (!L::kMin) dot = _mm256_sub_epi32(dot, _mm256_set1_epi32(tt.offset[b]));
  acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(dw, _mm256_set1_ps(tt.d[b])), acc);
  if constexpr (L::kMin) {
    const __m256 mw = _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + L::kMinsAt + 16 * h)));
    acc = _mm256_fmadd_ps(mw, _mm256_set1_ps(tt.s[b]), acc);
  }
  return acc;
}

// Group G's codes of code bytes v as the two operands of the low and high products: Q4's low
// nibbles and high ones in place, Q5's with their fifth bits from h.
template <class L, int G>
inline void group_codes(__m512i v, __m512i h, __m512i& vl, __m512i& vh) {
  const __m512i low = _mm512_set1_epi8(0x0F);
  if constexpr (L::kFive) {
    five_bit_codes<G>(v, h, low, vl, vh);
  } else {
    vl = _mm512_and_si512(v, low);
    vh = _mm512_and_si512(v, _mm512_set1_epi8(static_cast<char>(0xF0)));
  }
}
template <class L, int G>
inline void group_codes(__m256i v, __m256i h, __m256i& vl, __m256i& vh) {
  const __m256i low = _mm256_set1_epi8(0x0F);
  if constexpr (L::kFive) {
    five_bit_codes<G>(v, h, low, vl, vh);
  } else {
    vl = _mm256_and_si256(v, low);
    vh = _mm256_and_si256(v, _mm256_set1_epi8(static_cast<char>(0xF0)));
  }
}

template <class L>
const typename L::ActBlock* token_blocks(const GemmArgs& g, int64_t t) {
  return reinterpret_cast<const typename L::ActBlock*>(static_cast<const uint8_t*>(g.a) +
                                                       t * g.a_stride);
}

// One panel (16 rows at r, stored up to r1) x token t: decode, in 256-bit registers (EVEX
// vpdpbusd on ymm): rows 0-7 from each group's first 32 bytes, rows 8-15 from its second; the
// low and the high nibbles of each half keep two int32 chains (groups 0, 2 and 1, 3). Per row
// the same integers and float operations as the 512-bit prompt tiles. Why not 512-bit: out of
// memory on one thread (`decode_layers_bench --type q4_0 -t 1 --rounds 12`, stop 29, Zen 4
// VM, 3 runs a way, interleaved) the 512-bit tile read 90-94% of a plain read, the AVX2 table's
// 94-97%, this 94-99%; in cache this reads 53 GB/s, the 512-bit tile 48-57 and the AVX2 one 43.
template <class L>
void decode_panel(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                  const BlockTerms& tt, int64_t nb, bool prefetch) {
  const typename L::ActBlock* a = token_blocks<L>(g, t);
  float* y = g.y + t * g.y_stride + r;
  const __mmask16 m = row_mask(r1 - r);
  __m256 acc[2];
  start_halves_x16(g, y, m, acc);
  avx2::LinePrefetcher ahead(panel, decode_prefetch_bytes(), prefetch);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = panel + b * L::kBlockBytes;
    ahead.upto(blk + L::kBlockBytes);
    const int8_t* q = a[b].qs;
    // [half][chain]: half 0 rows 0-7, half 1 rows 8-15.
    __m256i lo[2][2], hi[2][2], fifth[2];
    for (int h = 0; h < 2; ++h) {
      lo[h][0] = lo[h][1] = hi[h][0] = hi[h][1] = _mm256_setzero_si256();
      fifth[h] =
          L::kFive ? load_in_register_256(blk + L::kFifthAt + 32 * h) : _mm256_setzero_si256();
    }
    unrolled<4>([&](auto group) __attribute__((always_inline)) {
      constexpr int grp = decltype(group)::value;
      const __m256i al = broadcast4_x8(q + 8 * grp), ah = broadcast4_x8(q + 8 * grp + 4);
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m256i v = load_in_register_256(blk + L::kCodesAt + L::kGroupBytes * grp + 32 * h);
        __m256i vl, vh;
        group_codes<L, grp>(v, fifth[h], vl, vh);
        lo[h][grp & 1] = _mm256_dpbusd_epi32(lo[h][grp & 1], vl, al);
        hi[h][grp & 1] = _mm256_dpbusd_epi32(hi[h][grp & 1], vh, ah);
      }
    });
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256i dot =
          block_dot<L>(_mm256_add_epi32(lo[h][0], lo[h][1]), _mm256_add_epi32(hi[h][0], hi[h][1]));
      acc[h] = add_block_half<L>(acc[h], dot, blk, h, tt, b);
    }
  }
  store_halves_x16(y, m, acc);
}

// One panel x token t in 512-bit registers: decode_panel's integers and float operations per
// row, with whole groups (16 rows) per load; two int32 chains per nibble half.
template <class L>
void decode_panel_512(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                      const BlockTerms& tt, int64_t nb, bool prefetch) {
  const typename L::ActBlock* a = token_blocks<L>(g, t);
  float* y = g.y + t * g.y_stride + r;
  const __mmask16 m = row_mask(r1 - r);
  __m512 acc = start_rows_x16(g, y, m);
  avx2::LinePrefetcher ahead(panel, decode_prefetch_bytes(), prefetch);
  auto block = [&](int64_t b) __attribute__((always_inline)) {
    const uint8_t* blk = panel + b * L::kBlockBytes;
    const int8_t* q = a[b].qs;
    __m512i lo[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
    __m512i hi[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
    const __m512i fifth = L::kFive ? load_in_register(blk + L::kFifthAt) : _mm512_setzero_si512();
    unrolled<4>([&](auto group) __attribute__((always_inline)) {
      constexpr int grp = decltype(group)::value;
      const __m512i v = load_in_register(blk + L::kCodesAt + L::kGroupBytes * grp);
      __m512i vl, vh;
      group_codes<L, grp>(v, fifth, vl, vh);
      lo[grp & 1] = _mm512_dpbusd_epi32(lo[grp & 1], vl, broadcast4_x16(q + 8 * grp));
      hi[grp & 1] = _mm512_dpbusd_epi32(hi[grp & 1], vh, broadcast4_x16(q + 8 * grp + 4));
    });
    const __m512i dot =
        block_dot<L>(_mm512_add_epi32(lo[0], lo[1]), _mm512_add_epi32(hi[0], hi[1]));
    acc = add_block<L>(acc, dot, RowScales<L>(blk), tt, b);
  };
  for_each_block_in_runs<L::kBlockBytes>(panel, nb, ahead, block);
  _mm512_mask_storeu_ps(y, m, acc);
}

// One panel (16 rows at r, stored up to r1) x tokens t .. t + T - 1 (terms of token t at tt,
// token t + j's nb further each): prefill. A group's codes are loaded and split once for all T
// tokens.
template <class L, int T>
void panel_tile(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                const BlockTerms& tt, int64_t nb) {
  const typename L::ActBlock* a[T];
  BlockTerms tj[T];
  __m512 acc[T];
  const __mmask16 m = row_mask(r1 - r);
  for (int j = 0; j < T; ++j) {
    a[j] = token_blocks<L>(g, t + j);
    tj[j] = tt.from(j * nb);
    acc[j] = start_rows_x16(g, g.y + (t + j) * g.y_stride + r, m);
  }
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = panel + b * L::kBlockBytes;
    __m512i lo[T], hi[T];
    for (int j = 0; j < T; ++j) lo[j] = hi[j] = _mm512_setzero_si512();
    const __m512i fifth = L::kFive ? load_in_register(blk + L::kFifthAt) : _mm512_setzero_si512();
    unrolled<4>([&](auto group) __attribute__((always_inline)) {
      constexpr int grp = decltype(group)::value;
      const __m512i v = load_in_register(blk + L::kCodesAt + L::kGroupBytes * grp);
      __m512i vl, vh;
      group_codes<L, grp>(v, fifth, vl, vh);
#pragma GCC unroll 8
      for (int j = 0; j < T; ++j) {
        const int8_t* q = a[j][b].qs + 8 * grp;
        lo[j] = _mm512_dpbusd_epi32(lo[j], vl, broadcast4_x16(q));
        hi[j] = _mm512_dpbusd_epi32(hi[j], vh, broadcast4_x16(q + 4));
      }
    });
    const RowScales<L> w(blk);
#pragma GCC unroll 8
    for (int j = 0; j < T; ++j)
      acc[j] = add_block<L>(acc[j], block_dot<L>(lo[j], hi[j]), w, tj[j], b);
  }
  for (int j = 0; j < T; ++j) _mm512_mask_storeu_ps(g.y + (t + j) * g.y_stride + r, m, acc[j]);
}

template <class L>
void gemm_packed_x16(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  static thread_local TermsOf<L> terms;
  terms.make(g, t0, t1);
  const BlockTerms all = view(terms);
  const int64_t nb = g.n / kQK;
  const bool prefetch = t1 - t0 == 1 && decode_prefetch();
  const bool wide = decode_wide();
  avx2::for_each_panel_tile<L::kRows, kTokenTile>(
      g, r0, r1, t0, t1, [&]<int T>(const uint8_t* panel, int64_t r, int64_t t) {
        const BlockTerms tt = all.from((t - t0) * nb);
        if constexpr (T == 1) {
          if (wide) {
            decode_panel_512<L>(g, panel, r, r1, t, tt, nb, prefetch);
          } else {
            decode_panel<L>(g, panel, r, r1, t, tt, nb, prefetch);
          }
        } else {
          panel_tile<L, T>(g, panel, r, r1, t, tt, nb);
        }
      });
}

template <class L>
void set_block32_x16(KernelTable& t, DType type) {
  set_packed_x16(t.types[static_cast<uint32_t>(type)].packed, block32_panel_bytes<L>,
                 pack_block32_panel<L>, gemm_packed_x16<L>);
}

}  // namespace

void fill_avx512_packed_q4_q5(KernelTable& t) {
  set_block32_x16<Q4_0Panel<16>>(t, DType::kQ4_0);
  set_block32_x16<Q4_1Panel<16>>(t, DType::kQ4_1);
  set_block32_x16<Q5_0Panel<16>>(t, DType::kQ5_0);
  set_block32_x16<Q5_1Panel<16>>(t, DType::kQ5_1);
}

}  // namespace cohort::kernels
