// AVX2 product of packed Q4_0 panels (kernels/packed_layouts.h: 8 rows, the rows in the 8
// int32 lanes) with Q8_0 activations: decode and prefill alike. Per block of a panel, the
// 4 nibble groups unpack once for a tile of up to 4 tokens; each token broadcasts 4 bytes
// of its activations at a time against all 8 rows, so one maddubs does 32 multiplies of 8
// rows where the row-major tiles needed a horizontal sum per row at the end and a scale
// conversion per row and block. sum (q - 8) a = sum q a - 8 sum a: the second term is one
// integer per token block, taken once per call. Decode (one token) runs one or two panels at
// a time instead (decode_panels). On a CPU with VNNI a VNNI table (avx2_vnni, avx2_vnni_evex) runs
// the same tiles with vpdpbusd (their kDot).
//
// Exactness and determinism: per block, the 8 maddubs of a row add at most 16 products of
// 15 * 127 in int16 (<= 30480), then int32; the block's integer dot is exact. A (row,
// token) pair then has one float accumulator, updated block by block in order with
// fma(float(dot), d_w * d_a): the same operations in every tile, so a row's bits do not
// depend on its panel's other rows, the token tile, or the split of panels between threads.
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
  std::vector<int32_t> offset;  // 8 * the sum of its codes
  TermsKey key;                 // what they were made from
};

// Terms of tokens [t0, t1) (token t's blocks at (t - t0) * nb), into per-thread storage grown
// to the largest call seen: no allocation once warm; those of the last call when it read the
// same activations (TermsKey: a product cut into chunks makes them once per thread).
const TokenBlockTerms& token_terms(const GemmArgs& g, int64_t t0, int64_t t1) {
  thread_local TokenBlockTerms terms;
  if (!terms.key.fresh(g, t0, t1)) return terms;
  const int64_t nb = g.n / kQK;
  const size_t need = static_cast<size_t>((t1 - t0) * nb);
  if (terms.d.size() < need) {
    terms.d.resize(need);
    terms.offset.resize(need);
  }
  const __m256i ones8 = _mm256_set1_epi8(1);
  for (int64_t t = t0; t < t1; ++t) {
    const auto* a =
        reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(g.a) + t * g.a_stride);
    for (int64_t b = 0; b < nb; ++b) {
      const size_t i = static_cast<size_t>((t - t0) * nb + b);
      terms.d[i] = avx2::f16_to_f32(a[b].d);
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[b].qs));
      terms.offset[i] = 8 * avx2::hsum_i32(avx2::dot_u8_s8_i32(ones8, q));
    }
  }
  return terms;
}

// Nibble group grp of a block: 32 bytes, 4 columns x 8 rows in each nibble half.
inline __m256i load_group(const uint8_t* blk, int grp) {
  __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 16 + 32 * grp));
  avx2::keep_in_register(v);  // else GCC loads v once per use: two loads where one does
  return v;
}

// Nibble group grp of a block as its low and high codes.
inline void unpack_group(const uint8_t* blk, int grp, __m256i low, __m256i& lo, __m256i& hi) {
  const __m256i v = load_group(blk, grp);
  lo = _mm256_and_si256(v, low);
  hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
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

// One panel (8 rows at row r) x tokens t .. t + T - 1 (terms of token t at tk). With kVnni
// (a VNNI table: kDot) a block's products go through vpdpbusd, which multiplies a lane's 4
// byte pairs and adds them into int32 in one instruction where maddubs, the int16 add and the
// final madd took three; the block's integer dot is the same exact integer either way, so the
// float operations and every result's bits are the same. One or two tokens then keep two
// int32 chains per token, so that a block's 8 vpdpbusd do not wait on each other's latency.
template <int T, avx2::Dot kDot>
inline void panel_tile(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                       const float* td, const int32_t* toff, int64_t nb) {
  constexpr bool kVnni = kDot != avx2::Dot::kMaddubs;
  constexpr int kChains = kVnni && T <= 2 ? 2 : 1;
  const BlockQ8_0* a[T];
  for (int j = 0; j < T; ++j) {
    a[j] =
        reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(g.a) + (t + j) * g.a_stride);
  }
  const int64_t rows = std::min<int64_t>(kQ4_0PanelRows, r1 - r);
  __m256 acc[T];
  for (int j = 0; j < T; ++j) acc[j] = avx2::start_rows(g, g.y + (t + j) * g.y_stride + r, rows);
  const __m256i low = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = panel + b * kQ4_0x8BlockBytes;
    // Per token: int16 sums of maddubs pairs, or with kVnni int32 lane sums.
    __m256i sum[T][kChains];
    for (int j = 0; j < T; ++j) {
      for (int c = 0; c < kChains; ++c) sum[j][c] = _mm256_setzero_si256();
    }
#pragma GCC unroll 4
    for (int grp = 0; grp < 4; ++grp) {
      __m256i lo, hi;
      unpack_group(blk, grp, low, lo, hi);
#pragma GCC unroll 4
      for (int j = 0; j < T; ++j) {
        const int8_t* q = a[j][b].qs + 8 * grp;
        add_group<kDot>(sum[j][grp % kChains], lo, hi, avx2::broadcast4(q),
                        avx2::broadcast4(q + 4));
      }
    }
    const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk)));
#pragma GCC unroll 4
    for (int j = 0; j < T; ++j) {
      __m256i dot = kVnni ? sum[j][0] : _mm256_madd_epi16(sum[j][0], ones);
      if constexpr (kChains == 2) dot = _mm256_add_epi32(dot, sum[j][1]);
      dot = _mm256_sub_epi32(dot, _mm256_set1_epi32(toff[j * nb + b]));
      const __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(td[j * nb + b]));
      acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), scale, acc[j]);
    }
  }
  for (int j = 0; j < T; ++j) avx2::store_rows(g.y + (t + j) * g.y_stride + r, acc[j], rows);
}

// Token t x P panels from panel0 on (rows r ..; the rows from r1 on are not stored): decode,
// one panel or two at a time (for_each_panel_pair says which, and why). Each panel's weights
// are asked for once per line ahead of their reads (LinePrefetcher). With kVnni each panel
// keeps its low-nibble and high-nibble products in two int32 chains, so that a block's 8
// vpdpbusd do not wait on each other, and takes the high nibbles in place (v & 0xF0, 16 x
// the code) rather than shifted down: one shift per block (the chain's sum / 16, exact, as
// it is a multiple of 16) instead of one per nibble group. Zen 4 VM, kernels_bench q4_0 256
// x 2048 x 1 in L2, one thread: one chain 37.1-37.5 GB/s, two 39.4-41.1, one load per
// group (not one per use: keep_in_register) 41.5-43.8, in-place high nibbles 46.6-47.4.
// Each panel's block dot is the same exact integer as panel_tile's, then the same float
// operations, so the bits are panel_tile's.
template <int P, avx2::Dot kDot>
void decode_panels(const GemmArgs& g, const uint8_t* panel0, int64_t r, int64_t r1, int64_t t,
                   const float* td, const int32_t* toff, int64_t nb) {
  constexpr bool kVnni = kDot != avx2::Dot::kMaddubs;
  constexpr int kChains = kVnni ? 2 : 1;
  const auto* a =
      reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(g.a) + t * g.a_stride);
  __m256 acc[P];
  for (int p = 0; p < P; ++p) {
    const int64_t first = r + p * kQ4_0PanelRows;
    acc[p] = avx2::start_rows(g, g.y + t * g.y_stride + first,
                              std::min<int64_t>(kQ4_0PanelRows, r1 - first));
  }
  avx2::PanelPrefetchers<P> ahead(panel0, g.w_stride);
  const __m256i low = _mm256_set1_epi8(0x0F), high = _mm256_set1_epi8(static_cast<char>(0xF0)),
                ones = _mm256_set1_epi16(1);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk[P];
    __m256i sum[P][kChains];
#pragma GCC unroll 2
    for (int p = 0; p < P; ++p) {
      blk[p] = panel0 + p * g.w_stride + b * kQ4_0x8BlockBytes;
      ahead.upto(p, blk[p] + kQ4_0x8BlockBytes);
      for (int c = 0; c < kChains; ++c) sum[p][c] = _mm256_setzero_si256();
    }
#pragma GCC unroll 4
    for (int grp = 0; grp < 4; ++grp) {
      const int8_t* q = a[b].qs + 8 * grp;
      const __m256i q_lo = avx2::broadcast4(q), q_hi = avx2::broadcast4(q + 4);
#pragma GCC unroll 2
      for (int p = 0; p < P; ++p) {
        if constexpr (kVnni) {
          const __m256i v = load_group(blk[p], grp);
          sum[p][0] = avx2::dpbusd<kDot>(sum[p][0], _mm256_and_si256(v, low), q_lo);
          sum[p][1] = avx2::dpbusd<kDot>(sum[p][1], _mm256_and_si256(v, high), q_hi);
        } else {
          __m256i lo, hi;
          unpack_group(blk[p], grp, low, lo, hi);
          add_group<kDot>(sum[p][0], lo, hi, q_lo, q_hi);
        }
      }
    }
    const __m256 da = _mm256_set1_ps(td[b]);
    const __m256i offset = _mm256_set1_epi32(toff[b]);
#pragma GCC unroll 2
    for (int p = 0; p < P; ++p) {
      const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk[p])));
      __m256i dot;
      if constexpr (kVnni) {
        dot = _mm256_add_epi32(sum[p][0], _mm256_srai_epi32(sum[p][1], 4));
      } else {
        dot = _mm256_madd_epi16(sum[p][0], ones);
      }
      dot = _mm256_sub_epi32(dot, offset);
      acc[p] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(dw, da), acc[p]);
    }
  }
  for (int p = 0; p < P; ++p) {
    const int64_t first = r + p * kQ4_0PanelRows;
    avx2::store_rows(g.y + t * g.y_stride + first, acc[p],
                     std::min<int64_t>(kQ4_0PanelRows, r1 - first));
  }
}

template <avx2::Dot kDot>
void gemm_packed_q4_0(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const int64_t nb = g.n / kQK;
  const TokenBlockTerms& terms = token_terms(g, t0, t1);
  if (t1 - t0 == 1) {
    avx2::for_each_panel_pair<kQ4_0PanelRows>(
        g, r0, r1, [&]<int P>(const uint8_t* panel, int64_t r) {
          decode_panels<P, kDot>(g, panel, r, r1, t0, terms.d.data(), terms.offset.data(), nb);
        });
    return;
  }
  avx2::for_each_panel_tile<kQ4_0PanelRows, kTokenTile>(
      g, r0, r1, t0, t1, [&]<int T>(const uint8_t* panel, int64_t r, int64_t t) {
        const size_t k = static_cast<size_t>((t - t0) * nb);
        panel_tile<T, kDot>(g, panel, r, r1, t, &terms.d[k], &terms.offset[k], nb);
      });
}

}  // namespace

void fill_vnni_packed_q4_0(KernelTable& t, bool evex) {
  t.types[static_cast<uint32_t>(DType::kQ4_0)].packed.gemm =
      evex ? gemm_packed_q4_0<avx2::Dot::kVnniEvex> : gemm_packed_q4_0<avx2::Dot::kVnniVex>;
}

void fill_avx2_packed_q4_0(KernelTable& t) {
  TypeOps::Packed& p = t.types[static_cast<uint32_t>(DType::kQ4_0)].packed;
  p.panel_rows = kQ4_0PanelRows;
  p.panel_bytes = q4_0x8_panel_bytes;
  p.pack_panel = pack_q4_0x8;
  p.gemm = gemm_packed_q4_0<avx2::Dot::kMaddubs>;
  p.accumulates = true;
}

}  // namespace cohort::kernels
