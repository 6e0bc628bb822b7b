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

// d_w * d_a broadcast to 8 lanes. The halves are converted straight from memory (a 64-bit
// load of the d field and the 6 bytes after it, all inside the block): this keeps the
// shuffle port free, which the scale conversion otherwise saturates in these loops.
inline __m256 scale(const uint16_t* dw, const uint16_t* da) {
  const __m128 w = _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(dw)));
  const __m128 a = _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(da)));
  return _mm256_broadcastss_ps(_mm_mul_ss(w, a));
}

inline __m256i load32(const int8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// sum_j (q[j] - offset) * a[j] in 8 int32 lanes for unsigned codes q: two maddubs
// (q * a and offset * a, each pair sum at most 31 * 127 * 2 in int16) and one subtract,
// one uop fewer than making q - offset signed and using the sign trick.
inline __m256i dot_offset_codes(__m256i q_u8, int8_t offset, __m256i a_s8) {
  const __m256i p = _mm256_maddubs_epi16(q_u8, a_s8);
  const __m256i o = _mm256_maddubs_epi16(_mm256_set1_epi8(offset), a_s8);
  return _mm256_madd_epi16(_mm256_sub_epi16(p, o), _mm256_set1_epi16(1));
}

inline __m256 block_q4_0(const BlockQ4_0& x, const BlockQ8_0& y, __m256 acc) {
  const __m256i p = dot_offset_codes(avx2::unpack_nibbles32(x.qs), 8, load32(y.qs));
  return _mm256_fmadd_ps(scale(&x.d, &y.d), _mm256_cvtepi32_ps(p), acc);
}

inline __m256 block_q5_0(const BlockQ5_0& x, const BlockQ8_0& y, __m256 acc) {
  const __m256i hi = _mm256_and_si256(avx2::bits_to_bytes32(x.qh), _mm256_set1_epi8(0x10));
  const __m256i q = _mm256_or_si256(avx2::unpack_nibbles32(x.qs), hi);
  const __m256i p = dot_offset_codes(q, 16, load32(y.qs));
  return _mm256_fmadd_ps(scale(&x.d, &y.d), _mm256_cvtepi32_ps(p), acc);
}

inline __m256 block_q8_0(const BlockQ8_0& x, const BlockQ8_0& y, __m256 acc) {
  // Weights first: |x| of a weight -128 is 128 as an unsigned byte, which maddubs accepts;
  // activations never hold -128.
  const __m256i p = avx2::dot_s8_s8_i32(load32(x.qs), load32(y.qs));
  return _mm256_fmadd_ps(scale(&x.d, &y.d), _mm256_cvtepi32_ps(p), acc);
}

// The _1 types: (d_w, m_w) and (d_a, s_a) are adjacent halves, so one conversion and one
// multiply give d_w * d_a in lane 0 and the min term m_w * s_a in lane 1, which sums into
// *mins (lane 1 is the one that counts).
inline __m256 scale_and_min(const uint16_t* w, const uint16_t* a, __m128* mins) {
  const __m128 wv = _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w)));
  const __m128 av = _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a)));
  const __m128 prod = _mm_mul_ps(wv, av);
  *mins = _mm_add_ps(*mins, prod);
  return _mm256_broadcastss_ps(prod);
}

inline __m256 block_q4_1(const BlockQ4_1& x, const BlockQ8_1& y, __m256 acc, __m128* mins) {
  const __m256i p = avx2::dot_u8_s8_i32(avx2::unpack_nibbles32(x.qs), load32(y.qs));
  return _mm256_fmadd_ps(scale_and_min(&x.d, &y.d, mins), _mm256_cvtepi32_ps(p), acc);
}

inline __m256 block_q5_1(const BlockQ5_1& x, const BlockQ8_1& y, __m256 acc, __m128* mins) {
  const __m256i hi = _mm256_and_si256(avx2::bits_to_bytes32(x.qh), _mm256_set1_epi8(0x10));
  const __m256i q = _mm256_or_si256(avx2::unpack_nibbles32(x.qs), hi);
  const __m256i p = avx2::dot_u8_s8_i32(q, load32(y.qs));
  return _mm256_fmadd_ps(scale_and_min(&x.d, &y.d, mins), _mm256_cvtepi32_ps(p), acc);
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

// As dot_blocks for the _1 types, adding the min terms m_w * s_a.
template <typename WBlock, typename Fn>
inline float dot_blocks_min(int64_t n, const void* w, const void* a, Fn block) {
  const auto* x = static_cast<const WBlock*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  const int64_t nb = n / kQK;
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  __m128 mins0 = _mm_setzero_ps(), mins1 = _mm_setzero_ps();
  int64_t i = 0;
  for (; i + 2 <= nb; i += 2) {
    acc0 = block(x[i], y[i], acc0, &mins0);
    acc1 = block(x[i + 1], y[i + 1], acc1, &mins1);
  }
  if (i < nb) acc0 = block(x[i], y[i], acc0, &mins0);
  const __m128 mins = _mm_add_ps(mins0, mins1);
  return avx2::hsum(_mm256_add_ps(acc0, acc1)) + _mm_cvtss_f32(_mm_movehdup_ps(mins));
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
  return dot_blocks_min<BlockQ4_1>(n, w, a, block_q4_1);
}

float vec_dot_q5_1(int64_t n, const void* w, const void* a) {
  return dot_blocks_min<BlockQ5_1>(n, w, a, block_q5_1);
}

// ---- Activation quantizers, bit-identical to quantize_row_q8_0/q8_1: amax, d = amax / 127
// rounded to fp16 (nearest even), q = clamp(round_half_even(x * (1 / d)), -127, 127), and
// for Q8_1 s = fp16(d * sum(q)). The scale arithmetic runs for 8 blocks at once (IEEE
// division and F16C conversions give the same bits as the scalar reference); a short tail
// of blocks takes the same path through a zero-padded buffer.

inline float block_amax(const float* x) {
  const __m256 m0 =
      _mm256_max_ps(avx2::abs_ps(_mm256_loadu_ps(x)), avx2::abs_ps(_mm256_loadu_ps(x + 8)));
  const __m256 m1 =
      _mm256_max_ps(avx2::abs_ps(_mm256_loadu_ps(x + 16)), avx2::abs_ps(_mm256_loadu_ps(x + 24)));
  return avx2::hmax(_mm256_max_ps(m0, m1));
}

// Codes of one block with reciprocal scale id; returns their sum.
inline int32_t block_codes(const float* x, float id, int8_t* qs) {
  const __m256 vid = _mm256_set1_ps(id);
  const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  const auto code = [&](const float* p) {
    const __m256 r = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(p), vid),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(r, lo), hi));
  };
  const __m256i i0 = code(x), i1 = code(x + 8), i2 = code(x + 16), i3 = code(x + 24);
  avx2::store_i32x32_as_i8(qs, i0, i1, i2, i3);
  return avx2::hsum_i32(_mm256_add_epi32(_mm256_add_epi32(i0, i1), _mm256_add_epi32(i2, i3)));
}

// Quantizes 8 consecutive blocks of x into b[0..7].
template <typename Block>
inline void quantize_8_blocks(const float* x, Block* b) {
  alignas(32) float amax[8];
  for (int k = 0; k < 8; ++k) amax[k] = block_amax(x + k * kQK);
  const __m256 d = _mm256_div_ps(_mm256_load_ps(amax), _mm256_set1_ps(127.0f));
  const __m128i dh = _mm256_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT);
  const __m256 dr = _mm256_cvtph_ps(dh);
  const __m256 nonzero = _mm256_cmp_ps(dr, _mm256_setzero_ps(), _CMP_NEQ_OQ);
  const __m256 id = _mm256_and_ps(_mm256_div_ps(_mm256_set1_ps(1.0f), dr), nonzero);
  alignas(16) uint16_t dhs[8];
  alignas(32) float ids[8];
  alignas(32) int32_t sums[8];
  _mm_store_si128(reinterpret_cast<__m128i*>(dhs), dh);
  _mm256_store_ps(ids, id);
  for (int k = 0; k < 8; ++k) {
    b[k].d = dhs[k];
    sums[k] = block_codes(x + k * kQK, ids[k], b[k].qs);
  }
  if constexpr (sizeof(Block) == sizeof(BlockQ8_1)) {
    const __m256 s = _mm256_mul_ps(
        dr, _mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(sums))));
    alignas(16) uint16_t shs[8];
    _mm_store_si128(reinterpret_cast<__m128i*>(shs), _mm256_cvtps_ph(s, _MM_FROUND_TO_NEAREST_INT));
    for (int k = 0; k < 8; ++k) b[k].s = shs[k];
  }
}

template <typename Block>
void quantize_q8(const float* x, void* y, int64_t n) {
  auto* b = static_cast<Block*>(y);
  const int64_t nb = n / kQK;
  int64_t i = 0;
  for (; i + 8 <= nb; i += 8) quantize_8_blocks(x + i * kQK, b + i);
  if (i < nb) {
    // Tail: pad to 8 blocks with zeros (which quantize to zero blocks) and copy back.
    const int64_t rest = nb - i;
    alignas(32) float xt[8 * kQK] = {};
    Block bt[8];
    for (int64_t k = 0; k < rest * kQK; ++k) xt[k] = x[i * kQK + k];
    quantize_8_blocks(xt, bt);
    for (int64_t k = 0; k < rest; ++k) b[i + k] = bt[k];
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
  ops(t, DType::kQ8_0).from_float = quantize_q8<BlockQ8_0>;
  ops(t, DType::kQ8_1).from_float = quantize_q8<BlockQ8_1>;
}

}  // namespace cohort::kernels
