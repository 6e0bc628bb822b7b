// AVX2+FMA dot products of the K-quants with Q8_K activations. Each 32-byte vector of
// unsigned quants meets 32 activation bytes in maddubs (u8 x s8 -> pairs of int16), then a
// madd with the int16 sub-block scales widens to int32; the integer sum of a super-block is
// converted once and scaled by d. Offsets of the signed formats (Q3_K's -4, Q6_K's -32) and
// the mins of Q2_K/Q4_K/Q5_K come out of one madd of the scales with the activation bsums.
// Element order is the one documented in tensor/quantize_k.cpp; ref/vec_dot_k.cpp is the
// specification these must match.
#include <cstring>

#include "kernels/registry.h"
#include "kernels/x86/k_quants_avx2.h"
#include "kernels/x86/simd_avx2.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

using avx2::bcast_i16;
using avx2::half_to_f32;
using avx2::load256;
using avx2::mins_dot_bsums;
using avx2::scale_pair_i16;
using avx2::unpack_scale_min_k4;

inline float hsum128(__m128 v) {
  v = _mm_add_ps(v, _mm_movehl_ps(v, v));
  v = _mm_add_ss(v, _mm_movehdup_ps(v));
  return _mm_cvtss_f32(v);
}

// Bytes equal to `value` where bit `bit` of the byte in m is set, 0 elsewhere.
inline __m256i bit_to(__m256i m, int bit, char value) {
  const __m256i b = _mm256_set1_epi8(static_cast<char>(1u << bit));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(m, b), b), _mm256_set1_epi8(value));
}

float vec_dot_q4_k(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ4_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const __m256i m4 = _mm256_set1_epi8(0xF);
  __m256 acc = _mm256_setzero_ps();
  __m128 acc_m = _mm_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d = y[i].d * half_to_f32(x[i].d);
    const float dmin = -y[i].d * half_to_f32(x[i].dmin);
    const __m128i sm8 = unpack_scale_min_k4(x[i].scales);
    acc_m =
        _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(mins_dot_bsums(sm8, y[i].bsums)), acc_m);
    const __m256i sc = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm8));
    const uint8_t* q = x[i].qs;
    const int8_t* qa = y[i].qs;
    __m256i sumi = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      const __m256i qv = load256(q + 32 * c);
      const __m256i lo = _mm256_and_si256(qv, m4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(qv, 4), m4);
      __m256i p0 = _mm256_maddubs_epi16(lo, load256(qa + 64 * c));
      __m256i p1 = _mm256_maddubs_epi16(hi, load256(qa + 64 * c + 32));
      p0 = _mm256_madd_epi16(p0, bcast_i16(sc, 2 * c));
      p1 = _mm256_madd_epi16(p1, bcast_i16(sc, 2 * c + 1));
      sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(p0, p1));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  return avx2::hsum(acc) + hsum128(acc_m);
}

float vec_dot_q5_k(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ5_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const __m256i m4 = _mm256_set1_epi8(0xF);
  const __m256i m16 = _mm256_set1_epi8(16);
  __m256 acc = _mm256_setzero_ps();
  __m128 acc_m = _mm_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d = y[i].d * half_to_f32(x[i].d);
    const float dmin = -y[i].d * half_to_f32(x[i].dmin);
    const __m128i sm8 = unpack_scale_min_k4(x[i].scales);
    acc_m =
        _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(mins_dot_bsums(sm8, y[i].bsums)), acc_m);
    const __m256i sc = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm8));
    const uint8_t* q = x[i].qs;
    const int8_t* qa = y[i].qs;
    // Bit 2c of qh[l] is the 5th bit of element 64c + l, bit 2c + 1 that of 64c + 32 + l.
    // Shifting 16-bit lanes right by 2 per chunk keeps those two bits at bits 0 and 1 of
    // every byte (bits entering from the neighbour byte land at bits >= 2).
    __m256i hb = load256(x[i].qh);
    __m256i sumi = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      const __m256i qv = load256(q + 32 * c);
      const __m256i lo = _mm256_or_si256(_mm256_and_si256(qv, m4),
                                         _mm256_and_si256(_mm256_slli_epi16(hb, 4), m16));
      const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qv, 4), m4),
                                         _mm256_and_si256(_mm256_slli_epi16(hb, 3), m16));
      hb = _mm256_srli_epi16(hb, 2);
      __m256i p0 = _mm256_maddubs_epi16(lo, load256(qa + 64 * c));
      __m256i p1 = _mm256_maddubs_epi16(hi, load256(qa + 64 * c + 32));
      p0 = _mm256_madd_epi16(p0, bcast_i16(sc, 2 * c));
      p1 = _mm256_madd_epi16(p1, bcast_i16(sc, 2 * c + 1));
      sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(p0, p1));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  return avx2::hsum(acc) + hsum128(acc_m);
}

float vec_dot_q6_k(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ6_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const __m256i m4 = _mm256_set1_epi8(0xF);
  const __m256i m48 = _mm256_set1_epi8(0x30);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d = y[i].d * half_to_f32(x[i].d);
    const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[i].scales));
    // q - 32 = stored 6-bit value minus 32: the -32 is sum_j sc[j] * 32 * bsums[j].
    const __m256i bias = _mm256_madd_epi16(_mm256_cvtepi8_epi16(sc8), load256(y[i].bsums));
    __m256i sumi = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(bias, 5));
    const int8_t* qa = y[i].qs;
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256i ql0 = load256(x[i].ql + 64 * h);
      const __m256i ql1 = load256(x[i].ql + 64 * h + 32);
      const __m256i qh = load256(x[i].qh + 32 * h);
      const __m256i q0 = _mm256_or_si256(_mm256_and_si256(ql0, m4),
                                         _mm256_and_si256(_mm256_slli_epi16(qh, 4), m48));
      const __m256i q1 = _mm256_or_si256(_mm256_and_si256(ql1, m4),
                                         _mm256_and_si256(_mm256_slli_epi16(qh, 2), m48));
      const __m256i q2 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4),
                                         _mm256_and_si256(qh, m48));
      const __m256i q3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                                         _mm256_and_si256(_mm256_srli_epi16(qh, 2), m48));
      const int8_t* ah = qa + 128 * h;
      __m256i p0 = _mm256_maddubs_epi16(q0, load256(ah));
      __m256i p1 = _mm256_maddubs_epi16(q1, load256(ah + 32));
      __m256i p2 = _mm256_maddubs_epi16(q2, load256(ah + 64));
      __m256i p3 = _mm256_maddubs_epi16(q3, load256(ah + 96));
      p0 = _mm256_madd_epi16(p0, scale_pair_i16(sc8, 8 * h + 0));
      p1 = _mm256_madd_epi16(p1, scale_pair_i16(sc8, 8 * h + 2));
      p2 = _mm256_madd_epi16(p2, scale_pair_i16(sc8, 8 * h + 4));
      p3 = _mm256_madd_epi16(p3, scale_pair_i16(sc8, 8 * h + 6));
      sumi = _mm256_add_epi32(sumi,
                              _mm256_add_epi32(_mm256_add_epi32(p0, p1), _mm256_add_epi32(p2, p3)));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  return avx2::hsum(acc);
}

float vec_dot_q3_k(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ3_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const __m256i m3 = _mm256_set1_epi8(3);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d = y[i].d * half_to_f32(x[i].d);
    // 16 6-bit scales: low 4 bits from bytes 0..7, high 2 bits from bytes 8..11.
    uint32_t u[3];
    std::memcpy(u, x[i].scales, sizeof(u));
    const uint32_t k4 = 0x0f0f0f0fu, k2 = 0x03030303u;
    const uint32_t s0 = (u[0] & k4) | ((u[2] & k2) << 4);
    const uint32_t s1 = (u[1] & k4) | (((u[2] >> 2) & k2) << 4);
    const uint32_t s2 = ((u[0] >> 4) & k4) | (((u[2] >> 4) & k2) << 4);
    const uint32_t s3 = ((u[1] >> 4) & k4) | (((u[2] >> 6) & k2) << 4);
    const __m128i sc8 = _mm_sub_epi8(_mm_set_epi32(static_cast<int>(s3), static_cast<int>(s2),
                                                   static_cast<int>(s1), static_cast<int>(s0)),
                                     _mm_set1_epi8(32));
    // Quants are (low 2 bits + 4 * hmask bit) - 4; the -4 is sum_j sc[j] * 4 * bsums[j].
    const __m256i bias = _mm256_madd_epi16(_mm256_cvtepi8_epi16(sc8), load256(y[i].bsums));
    __m256i sumi = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(bias, 2));
    const __m256i hm = load256(x[i].hmask);
    const int8_t* qa = y[i].qs;
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256i qv = load256(x[i].qs + 32 * h);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const int k = 4 * h + j;  // elements 32k .. 32k + 31
        const __m256i q =
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qv, 2 * j), m3), bit_to(hm, k, 4));
        const __m256i p = _mm256_maddubs_epi16(q, load256(qa + 32 * k));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, scale_pair_i16(sc8, 2 * k)));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  return avx2::hsum(acc);
}

float vec_dot_q2_k(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ2_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const __m256i m3 = _mm256_set1_epi8(3);
  const __m128i m4 = _mm_set1_epi8(0xF);
  __m256 acc = _mm256_setzero_ps();
  __m256 acc_m = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d = y[i].d * half_to_f32(x[i].d);
    const float dmin = -y[i].d * half_to_f32(x[i].dmin);
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[i].scales));
    const __m128i sc8 = _mm_and_si128(raw, m4);
    const __m128i mn8 = _mm_and_si128(_mm_srli_epi16(raw, 4), m4);
    const __m256i summ = _mm256_madd_epi16(_mm256_cvtepu8_epi16(mn8), load256(y[i].bsums));
    acc_m = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(summ), acc_m);
    const int8_t* qa = y[i].qs;
    __m256i sumi = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256i qv = load256(x[i].qs + 32 * h);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const int k = 4 * h + j;
        const __m256i q = _mm256_and_si256(_mm256_srli_epi16(qv, 2 * j), m3);
        const __m256i p = _mm256_maddubs_epi16(q, load256(qa + 32 * k));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, scale_pair_i16(sc8, 2 * k)));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  return avx2::hsum(_mm256_add_ps(acc, acc_m));
}

// Q8_K activations (the K types' vec_dot_type), bit for bit as the reference
// quantize_row_q8_k (tensor/quantize_k.cpp): per block of 256, amax = the largest |x| (a NaN
// ignored, as fmax does: max_ps returns its second operand when either is NaN), d = amax /
// 127, q = clamp(round_half_even(x * (127 / amax)), -127, 127) with NaN products at -127
// (max_ps(r, -127) is -127 for a NaN r), an all-zero block where !(amax > 0), and bsums the
// sums of each 16 codes. Decode quantizes every K-type product's input once per token: the
// scalar loop was 4% of 1B q4_K tg64 on 2 threads (perf, Zen 4 VM).
void quantize_q8_k(const float* x, void* y, int64_t n) {
  auto* b = static_cast<BlockQ8_K*>(y);
  const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    __m256 m = _mm256_setzero_ps();
    for (int e = 0; e < kQK_K; e += 8) m = _mm256_max_ps(avx2::abs_ps(_mm256_loadu_ps(x + e)), m);
    const float amax = avx2::hmax(m);
    if (!(amax > 0)) {
      b[i].d = 0;
      std::memset(b[i].qs, 0, sizeof(b[i].qs));
      std::memset(b[i].bsums, 0, sizeof(b[i].bsums));
      continue;
    }
    const __m256 iscale = _mm256_set1_ps(127.0f / amax);
    b[i].d = amax / 127.0f;
    const auto code = [&](const float* p) {
      const __m256 r = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(p), iscale),
                                       _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(r, lo), hi));
    };
    for (int g = 0; g < kQK_K / 32; ++g) {
      const float* p = x + 32 * g;
      const __m256i i0 = code(p), i1 = code(p + 8), i2 = code(p + 16), i3 = code(p + 24);
      avx2::store_i32x32_as_i8(b[i].qs + 32 * g, i0, i1, i2, i3);
      b[i].bsums[2 * g] = static_cast<int16_t>(avx2::hsum_i32(_mm256_add_epi32(i0, i1)));
      b[i].bsums[2 * g + 1] = static_cast<int16_t>(avx2::hsum_i32(_mm256_add_epi32(i2, i3)));
    }
  }
}

}  // namespace

void fill_avx2_k(KernelTable& t) {
  t.types[static_cast<uint32_t>(DType::kQ8_K)].from_float = quantize_q8_k;
  t.types[static_cast<uint32_t>(DType::kQ2_K)].vec_dot = vec_dot_q2_k;
  t.types[static_cast<uint32_t>(DType::kQ3_K)].vec_dot = vec_dot_q3_k;
  t.types[static_cast<uint32_t>(DType::kQ4_K)].vec_dot = vec_dot_q4_k;
  t.types[static_cast<uint32_t>(DType::kQ5_K)].vec_dot = vec_dot_q5_k;
  t.types[static_cast<uint32_t>(DType::kQ6_K)].vec_dot = vec_dot_q6_k;
}

}  // namespace cohort::kernels
