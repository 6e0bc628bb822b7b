// The thin AVX2/FMA/F16C layer shared by kernels/x86/*.cpp (only files compiled with
// -mavx2 -mfma -mf16c may include it). Shared helpers live here; a file's own one-off
// intrinsics stay in that file.
#pragma once

#include <immintrin.h>

#include <cstdint>

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

}  // namespace cohort::kernels::avx2
