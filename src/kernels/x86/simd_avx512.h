// What the AVX-512 packed tiles (x86/avx512_*.cpp, compiled with AVX-512 flags) share. Only
// those files include it; they walk their panels with packed_tiles.h's for_each_panel_tile,
// a template instantiated on each file's own (internal) tile lambdas. Everything here has internal
// linkage (an unnamed namespace): a function compiled for AVX-512 must never be the copy the linker
// keeps for a caller on a CPU without it (tests/kernels/avx512_symbols.sh checks the objects).
#pragma once

// GCC 12's AVX-512 headers start some intrinsics from _mm512_undefined_*(), which its
// -Wmaybe-uninitialized reports wherever they inline (GCC bug 105593): a false positive.
// (Clang, the fuzz preset's compiler, has no such warning and would reject the name.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/kernels.h"
#include "kernels/terms_key.h"
#include "kernels/x86/grow_array.h"
#include "kernels/x86/packed_tiles.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

// 4 activation bytes at p in every int32 lane (a memory operand of vpdpbusd: {1to16}).
inline __m512i broadcast4_x16(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// The same 4 bytes in every int32 lane of a 256-bit register (the one-token tiles that work
// in 256-bit halves of a 16-row panel).
inline __m256i broadcast4_x8(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// 64 (or 32) bytes at p, loaded once into a register: GCC folds a load into every instruction
// that uses its value (a mask for the low codes and a shift for the high ones: two loads of the
// same line), and the tiles' 64-byte loads, not their arithmetic, then bound them (stop 48:
// kernels_bench in L2, the Q3_K one-token tile 34 -> 52 GB/s, Q6_K's 58 -> 82, by this alone).
// The empty asm takes the loaded value as its operand, so the load is done once, here.
inline __m512i load_in_register(const void* p) {
  __m512i v = _mm512_loadu_si512(p);
  __asm__("" : "+v"(v));
  return v;
}
inline __m256i load_in_register_256(const void* p) {
  __m256i v = _mm256_loadu_si256(static_cast<const __m256i*>(p));
  __asm__("" : "+v"(v));
  return v;
}

// The first `rows` of 16 lanes (all of them from 16 rows on).
inline __mmask16 row_mask(int64_t rows) {
  return static_cast<__mmask16>(rows >= 16 ? 0xFFFF : (1u << rows) - 1);
}

// (a & 0x0F in every byte) | b: vpternlogd's table for (A & C) | B.
inline __m512i low4_or(__m512i a, __m512i b, __m512i low) {
  return _mm512_ternarylogic_epi32(a, b, low, 0xEC);
}
inline __m256i low4_or(__m256i a, __m256i b, __m256i low) {
  return _mm256_ternarylogic_epi32(a, b, low, 0xEC);
}

// Group G's 5-bit codes of a 16-row block whose fifth bits h are arranged as Q5_Kx16's (and
// Q5_0x16's, packed_layouts.h): the low nibbles' columns (lo) and the high nibbles' (hi) of
// the code bytes v, each byte's fifth bit moved from h to its bit 4. In 512-bit registers
// (16 rows) or 256-bit halves (8 rows: h the fifth bits of the same rows as v).
template <int G>
inline void five_bit_codes(__m512i v, __m512i h, __m512i low, __m512i& lo, __m512i& hi) {
  const __m512i bit4 = _mm512_set1_epi8(0x10);
  lo = low4_or(v, _mm512_and_si512(_mm512_slli_epi32(h, 4 - G), bit4), low);
  hi = low4_or(_mm512_srli_epi32(v, 4), _mm512_and_si512(_mm512_srli_epi32(h, G), bit4), low);
}
template <int G>
inline void five_bit_codes(__m256i v, __m256i h, __m256i low, __m256i& lo, __m256i& hi) {
  const __m256i bit4 = _mm256_set1_epi8(0x10);
  lo = low4_or(v, _mm256_and_si256(_mm256_slli_epi32(h, 4 - G), bit4), low);
  hi = low4_or(_mm256_srli_epi32(v, 4), _mm256_and_si256(_mm256_srli_epi32(h, G), bit4), low);
}

// A type's packed form of panels of 16 rows whose gemm accumulates (the K-quant tables'):
// the layout's panel bytes and packer, and the product.
inline void set_packed_x16(TypeOps::Packed& p, size_t (*panel_bytes)(int64_t),
                           decltype(TypeOps::Packed::pack_panel) pack,
                           decltype(TypeOps::Packed::gemm) gemm) {
  p.panel_rows = 16;
  p.panel_bytes = panel_bytes;
  p.pack_panel = pack;
  p.gemm = gemm;
  p.accumulates = true;
}

// The first value of a 16-row tile's sums: zero, or with g.accumulate what y holds.
inline __m512 start_rows_x16(const GemmArgs& g, const float* y, __mmask16 m) {
  return g.accumulate ? _mm512_maskz_loadu_ps(m, y) : _mm512_setzero_ps();
}

// start_rows_x16 as two 256-bit halves: acc[0] rows 0-7, acc[1] rows 8-15.
inline void start_halves_x16(const GemmArgs& g, const float* y, __mmask16 m, __m256 acc[2]) {
  const __m512 start = start_rows_x16(g, y, m);
  acc[0] = _mm512_castps512_ps256(start);
  acc[1] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(start), 1));
}

// Stores the rows of m of the two halves acc[0] (rows 0-7) and acc[1] (rows 8-15) at y.
inline void store_halves_x16(float* y, __mmask16 m, const __m256 acc[2]) {
  const __m512 out = _mm512_castpd_ps(_mm512_insertf64x4(
      _mm512_castps_pd(_mm512_castps256_ps512(acc[0])), _mm256_castps_pd(acc[1]), 1));
  _mm512_mask_storeu_ps(y, m, out);
}

// Per token block of Q8_0 or Q8_1 activations (Block), what the tiles of the 32-element block
// types take besides the codes: the block's scale as a float, and for Q8_0 kBias x the sum of
// its codes (the bias their unsigned weight bytes carry: 8 for Q4_0's codes, 16 for Q5_0's, 128
// for Q8_0's q + 128), for Q8_1 its s (d x the sum of its codes: Q4_1's and Q5_1's mins' factor)
// as a float. Per-thread storage grown to the largest call seen, made again only when a call
// reads other activations (TermsKey).
template <class Block, int kBias>
class Q8Terms {
 public:
  static constexpr bool kSums = std::is_same_v<Block, BlockQ8_1>;

  // Terms of tokens [t0, t1) of g (token t's blocks from (t - t0) * nb on).
  void make(const GemmArgs& g, int64_t t0, int64_t t1) {
    if (!key_.fresh(g, t0, t1)) return;
    const int64_t nb = g.n / kQK;
    const size_t need = static_cast<size_t>((t1 - t0) * nb);
    float* d = d_.reserve(need);
    int32_t* offset = kSums ? nullptr : offset_.reserve(need);
    float* s = kSums ? s_.reserve(need) : nullptr;
    for (int64_t t = t0; t < t1; ++t) {
      const auto* a =
          reinterpret_cast<const Block*>(static_cast<const uint8_t*>(g.a) + t * g.a_stride);
      for (int64_t b = 0; b < nb; ++b) {
        const size_t i = static_cast<size_t>((t - t0) * nb + b);
        d[i] = _cvtsh_ss(a[b].d);
        if constexpr (kSums) {
          s[i] = _cvtsh_ss(a[b].s);
        } else {
          // The 32 codes sign-extended to int16, added in one 512-bit register.
          const __m512i q =
              _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[b].qs)));
          offset[i] = kBias * _mm512_reduce_add_epi32(_mm512_madd_epi16(q, _mm512_set1_epi16(1)));
        }
      }
    }
  }

  const float* d() const { return d_.data(); }
  const int32_t* offset() const { return kSums ? nullptr : offset_.data(); }  // Q8_0's
  const float* s() const { return kSums ? s_.data() : nullptr; }              // Q8_1's

 private:
  GrowArray<float> d_;
  GrowArray<int32_t> offset_;
  GrowArray<float> s_;
  TermsKey key_;
};
template <int kBias>
using Q8_0Terms = Q8Terms<BlockQ8_0, kBias>;
using Q8_1Terms = Q8Terms<BlockQ8_1, 0>;

// Calls block(b) for b = 0 .. nb - 1, blocks of kBlockBytes from panel, in runs of
// ceil(avx2::kDecodeRunBytes / kBlockBytes) blocks (x86/packed_tiles.h): before each run, ahead
// asks for the lines up to its end (then the prefetch distance); the last blocks one at a time.
template <size_t kBlockBytes, typename Block>
inline void for_each_block_in_runs(const uint8_t* panel, int64_t nb, avx2::LinePrefetcher& ahead,
                                   const Block& block) {
  avx2::for_each_block_run<kBlockBytes>(
      nb, [&](int64_t end) { ahead.upto(panel + end * kBlockBytes); }, block);
}

// Calls step(std::integral_constant<int, I>{}) for I = 0 .. N - 1 in order, as N copies of
// its code: GCC 12 leaves a loop whose body is as long as a K-quant step rolled whatever its
// `#pragma GCC unroll` says. step must be a lambda marked __attribute__((always_inline)).
template <int N, typename Step>
__attribute__((always_inline)) inline void unrolled(const Step& step) {
  [&]<int... I>(std::integer_sequence<int, I...>) __attribute__((always_inline)) {
    (step(std::integral_constant<int, I>{}), ...);
  }
  (std::make_integer_sequence<int, N>{});
}

}  // namespace
}  // namespace cohort::kernels
