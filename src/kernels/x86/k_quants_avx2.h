// AVX2 pieces shared by the K-quant dot products (avx2_vec_dot_k.cpp) and their batched
// products (avx2_gemm_k.cpp): super-block scale unpacking and the lane shuffles that widen
// sub-block scales to the int16 lanes of maddubs' output. Only files compiled with
// -mavx2 -mfma -mf16c may include it.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace cohort::kernels::avx2 {

inline __m256i load256(const void* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

inline float half_to_f32(uint16_t h) { return _cvtsh_ss(h); }

// Int16 lane k of a 128-bit vector of 8 int16, broadcast to 16 lanes. v holds that vector
// in both 128-bit halves.
inline __m256i bcast_i16(__m256i v, int k) {
  return _mm256_shuffle_epi8(v,
                             _mm256_set1_epi16(static_cast<int16_t>(((2 * k + 1) << 8) | 2 * k)));
}

// Int8 scales s and s+1 of a 16-byte vector, widened to int16: 8 lanes of scale s then 8
// of scale s+1, matching the two 16-element sub-blocks covered by one 32-byte vector.
inline __m256i scale_pair_i16(__m128i sc8, int s) {
  const int64_t lo = static_cast<int64_t>(0x0101010101010101ull * static_cast<uint64_t>(s));
  const int64_t hi = static_cast<int64_t>(0x0101010101010101ull * static_cast<uint64_t>(s + 1));
  return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc8, _mm_set_epi64x(hi, lo)));
}

// Q4_K and Q5_K scale bytes: 8 6-bit scales (low 8 bytes) and 8 6-bit mins (high 8 bytes).
inline __m128i unpack_scale_min_k4(const uint8_t* scales) {
  uint32_t u[3];
  std::memcpy(u, scales, sizeof(u));
  const uint32_t s0 = u[0] & 0x3f3f3f3fu;
  const uint32_t m0 = u[1] & 0x3f3f3f3fu;
  const uint32_t s1 = (u[2] & 0x0f0f0f0fu) | ((u[0] >> 2) & 0x30303030u);
  const uint32_t m1 = ((u[2] >> 4) & 0x0f0f0f0fu) | ((u[1] >> 2) & 0x30303030u);
  return _mm_set_epi32(static_cast<int>(m1), static_cast<int>(m0), static_cast<int>(s1),
                       static_cast<int>(s0));
}

// Sum over the 8 sub-blocks of 32 of min[j] * (bsums[2j] + bsums[2j+1]), as 4 int32 lanes.
inline __m128i mins_dot_bsums(__m128i sm8, const int16_t* bsums) {
  const __m128i mins = _mm_cvtepu8_epi16(_mm_unpackhi_epi64(sm8, sm8));
  const __m256i bs = load256(bsums);
  const __m128i bs8 = _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
  return _mm_madd_epi16(mins, bs8);
}

}  // namespace cohort::kernels::avx2
