// The thin AVX2/FMA/F16C layer shared by kernels/x86/*.cpp (only files compiled with
// -mavx2 -mfma -mf16c may include it). Shared helpers live here; a file's own one-off
// intrinsics stay in that file.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/kernels.h"

namespace cohort::kernels::avx2 {

// Sum of the 8 lanes.
inline float hsum(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v);
  __m128 hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  __m128 sh = _mm_movehdup_ps(lo);
  lo = _mm_add_ps(lo, sh);
  sh = _mm_movehl_ps(sh, lo);
  lo = _mm_add_ss(lo, sh);
  return _mm_cvtss_f32(lo);
}

// Sum of the 8 int32 lanes.
inline int32_t hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

// 8 halves (IEEE binary16 bits) -> 8 floats.
inline __m256 load_f16x8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// 8 floats -> 8 halves, round to nearest even.
inline void store_f16x8(uint16_t* p, __m256 v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

// Sum over pairs of u8 x s8 products, widened to int32 lanes: the core of every quantized
// dot product (a must hold unsigned bytes, b signed).
inline __m256i dot_u8_s8_i32(__m256i a_u8, __m256i b_s8) {
  const __m256i p16 = _mm256_maddubs_epi16(a_u8, b_s8);
  return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
}

// Signed x signed byte dot product, 4 bytes per int32 lane (uses |a| and sign(b, a)).
inline __m256i dot_s8_s8_i32(__m256i a_s8, __m256i b_s8) {
  const __m256i ax = _mm256_sign_epi8(a_s8, a_s8);
  const __m256i sy = _mm256_sign_epi8(b_s8, a_s8);
  return dot_u8_s8_i32(ax, sy);
}

// e^x for 8 floats. Range reduction x = n*ln2 + r (|r| <= ln2/2, ln2 split in two for
// Cody-Waite), e^r by the degree-6 polynomial of cephes expf, 2^n applied as two factors
// 2^(n/2) so that the whole float range works. Relative error <= 1.2e-7 (about 1 ulp,
// measured against double exp) where e^x is a normal float; subnormal results are within
// one subnormal step. x > 88.73 (+inf included) gives +inf, x < -104 (-inf included)
// gives 0, NaN stays NaN.
inline __m256 exp_ps(__m256 x) {
  // min/max return their second operand when one is NaN, so NaN passes through.
  x = _mm256_max_ps(_mm256_set1_ps(-104.0f), _mm256_min_ps(_mm256_set1_ps(89.0f), x));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 r2 = _mm256_mul_ps(r, r);
  const __m256 y = _mm256_fmadd_ps(p, r2, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // n in [-150, 128]: each half in [-75, 64] is a normal power of two.
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
}

// Largest of the 8 lanes.
inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// Lane j of the result is the sum of the 8 lanes of v[j]: eight horizontal sums at once.
inline __m256 hsum8x8(const __m256 v[8]) {
  const __m256 s01 = _mm256_hadd_ps(v[0], v[1]);
  const __m256 s23 = _mm256_hadd_ps(v[2], v[3]);
  const __m256 s45 = _mm256_hadd_ps(v[4], v[5]);
  const __m256 s67 = _mm256_hadd_ps(v[6], v[7]);
  const __m256 s0123 = _mm256_hadd_ps(s01, s23);
  const __m256 s4567 = _mm256_hadd_ps(s45, s67);
  return _mm256_add_ps(_mm256_permute2f128_ps(s0123, s4567, 0x20),
                       _mm256_permute2f128_ps(s0123, s4567, 0x31));
}

// |v| per lane.
inline __m256 abs_ps(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

// One half (IEEE binary16 bits) -> float (F16C, exact).
inline float f16_to_f32(uint16_t h) { return _cvtsh_ss(h); }

// 8 bfloat16 -> 8 floats (exact: the bits are the high half of an f32).
inline __m256 load_bf16x8(const uint16_t* p) {
  const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

// 16 bytes of packed nibbles -> 32 bytes in [0, 15]: the low nibbles of p[0..15] in bytes
// 0..15, the high nibbles in bytes 16..31 (the GGUF order of Q4_0/Q4_1/Q5_0/Q5_1).
inline __m256i unpack_nibbles32(const uint8_t* p) {
  // Both 128-bit lanes load the 16 bytes (no shuffle uop); the high lane shifts right by 4.
  const __m256i v =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  const __m256i shifted = _mm256_srlv_epi64(v, _mm256_setr_epi64x(0, 0, 4, 4));
  return _mm256_and_si256(shifted, _mm256_set1_epi8(0x0F));
}

// 32 bits (little-endian uint32 at p) -> 32 bytes: byte j is 0xFF if bit j is set, else 0.
inline __m256i bits_to_bytes32(const uint8_t* p) {
  uint32_t x;
  __builtin_memcpy(&x, p, 4);
  const __m256i spread = _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101,
                                            0x0202020202020202, 0x0303030303030303);
  const __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(x)), spread);
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  return _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
}

// Four vectors of 8 int32 (each in [-128, 127]) -> 32 int8 in order, stored at p.
inline void store_i32x32_as_i8(int8_t* p, __m256i i0, __m256i i1, __m256i i2, __m256i i3) {
  const __m256i w01 = _mm256_packs_epi32(i0, i1);
  const __m256i w23 = _mm256_packs_epi32(i2, i3);
  const __m256i b = _mm256_packs_epi16(w01, w23);
  // packs interleaves the 128-bit lanes; put the 4-byte groups back in order.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm256_permutevar8x32_epi32(b, order));
}

// The 4 bytes at p in every int32 lane: one token's activations (or a pair of its int16
// terms) against the rows of a packed panel (kernels/packed_layouts.h), one row per lane.
inline __m256i broadcast4(const void* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// How a packed tile takes its int8 products: AVX2's maddubs (int16 pair sums, then madd or
// int16 adds), or vpdpbusd into int32 in the VEX form (AVX-VNNI: Alder Lake, Sapphire
// Rapids, Zen 5) or the EVEX form on the same 256-bit registers (AVX512-VNNI with AVX512VL:
// Ice Lake servers and Zen 4, which lack the VEX form). Both vpdpbusd forms compute the same
// exact integers, and these sums are exact in every form, so all three give the same bits.
enum class Dot { kMaddubs, kVnniVex, kVnniEvex };

// s + in each int32 lane the sum of its 4 byte products u8(a) x s8(b): vpdpbusd in kDot's
// encoding. Written as inline asm so that these files stay compiled for AVX2 alone: only a
// kernel of a VNNI table calls it, and such a table exists only on a CPU that runs its form
// (kernels::cpu_has_avx_vnni, cpu_has_avx512_vnni). The asm also keeps s in a register.
template <Dot kDot>
inline __m256i dpbusd(__m256i s, __m256i a, __m256i b) {
  static_assert(kDot != Dot::kMaddubs);
  if constexpr (kDot == Dot::kVnniVex) {
    __asm__("%{vex%} vpdpbusd %2, %1, %0" : "+x"(s) : "x"(a), "x"(b));
  } else {
    __asm__("%{evex%} vpdpbusd %2, %1, %0" : "+x"(s) : "x"(a), "x"(b));
  }
  return s;
}

// An empty barrier pinning v to a register. Without it GCC reassociates a packed tile's
// running integer sums (one per token) into trees and spills their partial products to the
// stack; pinned, each sum stays one chain in a register.
inline void keep_in_register(__m256i& v) { __asm__("" : "+x"(v)); }

// The first `rows` (1..8) floats at y in the low lanes, the rest zero: what store_rows
// stored, read back (GemmArgs::accumulate).
inline __m256 load_rows(const float* y, int64_t rows) {
  if (rows == 8) return _mm256_loadu_ps(y);
  alignas(32) float lanes[8] = {};
  for (int64_t i = 0; i < rows; ++i) lanes[i] = y[i];
  return _mm256_load_ps(lanes);
}

// The first result of a tile's row sums: zero, or with g.accumulate what y already holds.
inline __m256 start_rows(const GemmArgs& g, const float* y, int64_t rows) {
  return g.accumulate ? load_rows(y, rows) : _mm256_setzero_ps();
}

// The first rows (<= 8) lanes of v to y: a packed panel's results for one token, the last
// panel of a matrix holding fewer rows than lanes.
inline void store_rows(float* y, __m256 v, int64_t rows) {
  if (rows == 8) {
    _mm256_storeu_ps(y, v);
    return;
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, v);
  for (int64_t i = 0; i < rows; ++i) y[i] = lanes[i];
}

// A tile of P panels of 8 rows (panel p's rows from r + 8p, cut at r1) x T tokens from t,
// row sums in acc[p][j] (token t + j): their first values (start_rows), and their store.
template <int P, int T>
inline void start_tile(const GemmArgs& g, __m256 (&acc)[P][T], int64_t r, int64_t r1, int64_t t) {
  for (int p = 0; p < P; ++p) {
    const int64_t first = r + 8 * p;
    const int64_t rows = std::min<int64_t>(8, r1 - first);
    for (int j = 0; j < T; ++j) acc[p][j] = start_rows(g, g.y + (t + j) * g.y_stride + first, rows);
  }
}
template <int P, int T>
inline void store_tile(const GemmArgs& g, const __m256 (&acc)[P][T], int64_t r, int64_t r1,
                       int64_t t) {
  for (int p = 0; p < P; ++p) {
    const int64_t first = r + 8 * p;
    const int64_t rows = std::min<int64_t>(8, r1 - first);
    for (int j = 0; j < T; ++j) store_rows(g.y + (t + j) * g.y_stride + first, acc[p][j], rows);
  }
}

}  // namespace cohort::kernels::avx2
