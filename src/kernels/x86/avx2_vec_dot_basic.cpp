// AVX2+FMA+F16C dot products for the plain float types and the simple quants, and the
// Q8_0/Q8_1 activation quantizers. Semantics are those of ref/vec_dot_basic.cpp and
// tensor/quantize_basic.cpp; only the float summation order differs (the quantizers are
// bit-identical to the reference).
//
// Quantized kernels take one 32-element block per step: unpack the weight codes to 32
// bytes, multiply with the activation bytes by maddubs into 8 int32 lanes, convert and FMA
// with the product of the two block scales, alternating two accumulators so consecutive
// blocks do not wait on each other's FMA.
#include "core/fp16.h"
#include "kernels/registry.h"
#include "kernels/x86/simd_avx2.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

using avx2::f16_to_f32;

// ---- Plain floats: f32 activations, 4 accumulators of 8, then 8 at a time, then scalar.

template <typename Load8, typename Scalar>
inline float dot_float(int64_t n, const float* y, Load8 load8, Scalar scalar) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  __m256 acc2 = _mm256_setzero_ps(), acc3 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc0 = _mm256_fmadd_ps(load8(i), _mm256_loadu_ps(y + i), acc0);
    acc1 = _mm256_fmadd_ps(load8(i + 8), _mm256_loadu_ps(y + i + 8), acc1);
    acc2 = _mm256_fmadd_ps(load8(i + 16), _mm256_loadu_ps(y + i + 16), acc2);
    acc3 = _mm256_fmadd_ps(load8(i + 24), _mm256_loadu_ps(y + i + 24), acc3);
  }
  for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(load8(i), _mm256_loadu_ps(y + i), acc0);
  float sum = avx2::hsum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
  for (; i < n; ++i) sum += scalar(i) * y[i];
  return sum;
}

float vec_dot_f32(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const float*>(w);
  return dot_float(
      n, static_cast<const float*>(a), [x](int64_t i) { return _mm256_loadu_ps(x + i); },
      [x](int64_t i) { return x[i]; });
}

float vec_dot_f16(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const uint16_t*>(w);
  return dot_float(
      n, static_cast<const float*>(a), [x](int64_t i) { return avx2::load_f16x8(x + i); },
      [x](int64_t i) { return f16_to_f32(x[i]); });
}

float vec_dot_bf16(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const uint16_t*>(w);
  return dot_float(
      n, static_cast<const float*>(a), [x](int64_t i) { return avx2::load_bf16x8(x + i); },
      [x](int64_t i) { return bf16_to_f32(x[i]); });
}

void f16_to_float(const void* x, float* y, int64_t n) {
  const auto* h = static_cast<const uint16_t*>(x);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, avx2::load_f16x8(h + i));
  for (; i < n; ++i) y[i] = f16_to_f32(h[i]);
}

void float_to_f16(const float* x, void* y, int64_t n) {
  auto* h = static_cast<uint16_t*>(y);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) avx2::store_f16x8(h + i, _mm256_loadu_ps(x + i));
  for (; i < n; ++i) h[i] = f32_to_fp16(x[i]);
}

// ---- Quantized weights. Each block_* returns acc + d_w * d_a * (the block's code dot).

inline __m256 scale(uint16_t dw, uint16_t da) {
  return _mm256_set1_ps(f16_to_f32(dw) * f16_to_f32(da));
}

inline __m256i load32(const int8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

inline __m256 block_q4_0(const BlockQ4_0& x, const BlockQ8_0& y, __m256 acc) {
  const __m256i q = _mm256_sub_epi8(avx2::unpack_nibbles32(x.qs), _mm256_set1_epi8(8));
  const __m256i p = avx2::dot_s8_s8_i32(q, load32(y.qs));
  return _mm256_fmadd_ps(scale(x.d, y.d), _mm256_cvtepi32_ps(p), acc);
}

inline __m256 block_q5_0(const BlockQ5_0& x, const BlockQ8_0& y, __m256 acc) {
  // q - 16 as a signed byte: the nibble, with 0xF0 or-ed in where bit 4 is clear.
  const __m256i hi = _mm256_andnot_si256(avx2::bits_to_bytes32(x.qh), _mm256_set1_epi8(-16));
  const __m256i q = _mm256_or_si256(avx2::unpack_nibbles32(x.qs), hi);
  const __m256i p = avx2::dot_s8_s8_i32(q, load32(y.qs));
  return _mm256_fmadd_ps(scale(x.d, y.d), _mm256_cvtepi32_ps(p), acc);
}

inline __m256 block_q8_0(const BlockQ8_0& x, const BlockQ8_0& y, __m256 acc) {
  // Weights first: |x| of a weight -128 is 128 as an unsigned byte, which maddubs accepts;
  // activations never hold -128.
  const __m256i p = avx2::dot_s8_s8_i32(load32(x.qs), load32(y.qs));
  return _mm256_fmadd_ps(scale(x.d, y.d), _mm256_cvtepi32_ps(p), acc);
}

inline __m256 block_q4_1(const BlockQ4_1& x, const BlockQ8_1& y, __m256 acc) {
  const __m256i p = avx2::dot_u8_s8_i32(avx2::unpack_nibbles32(x.qs), load32(y.qs));
  return _mm256_fmadd_ps(scale(x.d, y.d), _mm256_cvtepi32_ps(p), acc);
}

inline __m256 block_q5_1(const BlockQ5_1& x, const BlockQ8_1& y, __m256 acc) {
  const __m256i hi = _mm256_and_si256(avx2::bits_to_bytes32(x.qh), _mm256_set1_epi8(0x10));
  const __m256i q = _mm256_or_si256(avx2::unpack_nibbles32(x.qs), hi);
  const __m256i p = avx2::dot_u8_s8_i32(q, load32(y.qs));
  return _mm256_fmadd_ps(scale(x.d, y.d), _mm256_cvtepi32_ps(p), acc);
}

// Blocks in pairs on two accumulators.
template <typename WBlock, typename ABlock, typename Fn>
inline float dot_blocks(int64_t n, const void* w, const void* a, Fn block) {
  const auto* x = static_cast<const WBlock*>(w);
  const auto* y = static_cast<const ABlock*>(a);
  const int64_t nb = n / kQK;
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 2 <= nb; i += 2) {
    acc0 = block(x[i], y[i], acc0);
    acc1 = block(x[i + 1], y[i + 1], acc1);
  }
  if (i < nb) acc0 = block(x[i], y[i], acc0);
  return avx2::hsum(_mm256_add_ps(acc0, acc1));
}

// The _1 types add m_w * s_a per block.
template <typename WBlock>
inline float min_terms(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const WBlock*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK; ++i) sum += f16_to_f32(x[i].m) * f16_to_f32(y[i].s);
  return sum;
}

float vec_dot_q4_0(int64_t n, const void* w, const void* a) {
  return dot_blocks<BlockQ4_0, BlockQ8_0>(n, w, a, block_q4_0);
}

float vec_dot_q5_0(int64_t n, const void* w, const void* a) {
  return dot_blocks<BlockQ5_0, BlockQ8_0>(n, w, a, block_q5_0);
}

float vec_dot_q8_0(int64_t n, const void* w, const void* a) {
  return dot_blocks<BlockQ8_0, BlockQ8_0>(n, w, a, block_q8_0);
}

float vec_dot_q4_1(int64_t n, const void* w, const void* a) {
  return dot_blocks<BlockQ4_1, BlockQ8_1>(n, w, a, block_q4_1) + min_terms<BlockQ4_1>(n, w, a);
}

float vec_dot_q5_1(int64_t n, const void* w, const void* a) {
  return dot_blocks<BlockQ5_1, BlockQ8_1>(n, w, a, block_q5_1) + min_terms<BlockQ5_1>(n, w, a);
}

// ---- Activation quantizers, bit-identical to quantize_row_q8_0/q8_1: amax, d = amax/127
// rounded to fp16, q = clamp(round_half_even(x * (1/d)), -127, 127). Returns the fp16 d
// and stores the codes; *sum gets the sum of the codes.
inline uint16_t quantize_block_q8(const float* x, int8_t* qs, int32_t* sum) {
  const __m256 v0 = _mm256_loadu_ps(x), v1 = _mm256_loadu_ps(x + 8);
  const __m256 v2 = _mm256_loadu_ps(x + 16), v3 = _mm256_loadu_ps(x + 24);
  const __m256 m = _mm256_max_ps(_mm256_max_ps(avx2::abs_ps(v0), avx2::abs_ps(v1)),
                                 _mm256_max_ps(avx2::abs_ps(v2), avx2::abs_ps(v3)));
  const uint16_t dh = f32_to_fp16(avx2::hmax(m) / 127.0f);
  const float d = fp16_to_f32(dh);
  const __m256 id = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
  const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  const auto code = [&](__m256 v) {
    const __m256 r =
        _mm256_round_ps(_mm256_mul_ps(v, id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(r, lo), hi));
  };
  const __m256i i0 = code(v0), i1 = code(v1), i2 = code(v2), i3 = code(v3);
  *sum = avx2::hsum_i32(
      _mm256_add_epi32(_mm256_add_epi32(i0, i1), _mm256_add_epi32(i2, i3)));
  avx2::store_i32x32_as_i8(qs, i0, i1, i2, i3);
  return dh;
}

void quantize_q8_0(const float* x, void* y, int64_t n) {
  auto* b = static_cast<BlockQ8_0*>(y);
  int32_t sum;
  for (int64_t i = 0; i < n / kQK; ++i) b[i].d = quantize_block_q8(x + i * kQK, b[i].qs, &sum);
}

void quantize_q8_1(const float* x, void* y, int64_t n) {
  auto* b = static_cast<BlockQ8_1*>(y);
  int32_t sum;
  for (int64_t i = 0; i < n / kQK; ++i) {
    b[i].d = quantize_block_q8(x + i * kQK, b[i].qs, &sum);
    b[i].s = f32_to_fp16(fp16_to_f32(b[i].d) * static_cast<float>(sum));
  }
}

TypeOps& ops(KernelTable& t, DType type) { return t.types[static_cast<uint32_t>(type)]; }

}  // namespace

void fill_avx2_basic(KernelTable& t) {
  ops(t, DType::kF32).vec_dot = vec_dot_f32;
  ops(t, DType::kF16).vec_dot = vec_dot_f16;
  ops(t, DType::kF16).to_float = f16_to_float;
  ops(t, DType::kF16).from_float = float_to_f16;
  ops(t, DType::kBF16).vec_dot = vec_dot_bf16;
  ops(t, DType::kQ4_0).vec_dot = vec_dot_q4_0;
  ops(t, DType::kQ4_1).vec_dot = vec_dot_q4_1;
  ops(t, DType::kQ5_0).vec_dot = vec_dot_q5_0;
  ops(t, DType::kQ5_1).vec_dot = vec_dot_q5_1;
  ops(t, DType::kQ8_0).vec_dot = vec_dot_q8_0;
  ops(t, DType::kQ8_0).from_float = quantize_q8_0;
  ops(t, DType::kQ8_1).from_float = quantize_q8_1;
}

}  // namespace cohort::kernels
