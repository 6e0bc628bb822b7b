// Scalar reference dot products for the plain float types and the simple quants: the
// specification the SIMD variants are tested against.
//
// F32/F16/BF16 weights take f32 activations (each weight converted per element) and sum
// in double. The quantized weights take quantized activations: Q4_0, Q5_0, Q8_0 against
// Q8_0; Q4_1, Q5_1 against Q8_1, whose s = d * sum(q) carries the weights' min term:
//   sum_i (d_w q_w[i] + m_w) d_a q_a[i] = d_w d_a sum_i q_w[i] q_a[i] + m_w s_a.
// Per block the integer dot is exact; block terms are summed in double.
#include "core/fp16.h"
#include "kernels/ref/gemm_pairs.h"
#include "kernels/registry.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

namespace cohort::kernels {
namespace {

float vec_dot_f32(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const float*>(w);
  const auto* y = static_cast<const float*>(a);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * y[i];
  return static_cast<float>(sum);
}

float vec_dot_f16(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const uint16_t*>(w);
  const auto* y = static_cast<const float*>(a);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(fp16_to_f32(x[i])) * y[i];
  return static_cast<float>(sum);
}

float vec_dot_bf16(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const uint16_t*>(w);
  const auto* y = static_cast<const float*>(a);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(bf16_to_f32(x[i])) * y[i];
  return static_cast<float>(sum);
}

// The 32 codes of a 4-bit block (element j in the low nibble of qs[j], j + 16 in the high).
inline void codes4(const uint8_t* qs, int* q) {
  for (int j = 0; j < kQK / 2; ++j) {
    q[j] = qs[j] & 0xF;
    q[j + kQK / 2] = qs[j] >> 4;
  }
}

// As codes4 plus bit 4 of element j from bit j of the little-endian uint32 qh.
inline void codes5(const uint8_t* qs, const uint8_t* qh, int* q) {
  const uint32_t h = static_cast<uint32_t>(qh[0]) | static_cast<uint32_t>(qh[1]) << 8 |
                     static_cast<uint32_t>(qh[2]) << 16 | static_cast<uint32_t>(qh[3]) << 24;
  codes4(qs, q);
  for (int j = 0; j < kQK; ++j) q[j] |= static_cast<int>((h >> j) & 1) << 4;
}

inline int dot_codes(const int* q, int offset, const int8_t* a) {
  int s = 0;
  for (int j = 0; j < kQK; ++j) s += (q[j] - offset) * a[j];
  return s;
}

// Dot of the 32 4-bit codes (minus offset) with 32 activation bytes.
inline int dot_nibbles(const uint8_t* qs, int offset, const int8_t* a) {
  int s = 0;
  for (int j = 0; j < kQK / 2; ++j) {
    s += ((qs[j] & 0xF) - offset) * a[j] + ((qs[j] >> 4) - offset) * a[j + kQK / 2];
  }
  return s;
}

float vec_dot_q4_0(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  double sum = 0.0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    const float d = fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d);
    sum += d * static_cast<float>(dot_nibbles(x[i].qs, 8, y[i].qs));
  }
  return static_cast<float>(sum);
}

float vec_dot_q4_1(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ4_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  double sum = 0.0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    const float d = fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d);
    sum += d * static_cast<float>(dot_nibbles(x[i].qs, 0, y[i].qs));
    sum += fp16_to_f32(x[i].m) * fp16_to_f32(y[i].s);
  }
  return static_cast<float>(sum);
}

float vec_dot_q5_0(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ5_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  double sum = 0.0;
  int q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i) {
    codes5(x[i].qs, x[i].qh, q);
    const float d = fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d);
    sum += d * static_cast<float>(dot_codes(q, 16, y[i].qs));
  }
  return static_cast<float>(sum);
}

float vec_dot_q5_1(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ5_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  double sum = 0.0;
  int q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i) {
    codes5(x[i].qs, x[i].qh, q);
    const float d = fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d);
    sum += d * static_cast<float>(dot_codes(q, 0, y[i].qs));
    sum += fp16_to_f32(x[i].m) * fp16_to_f32(y[i].s);
  }
  return static_cast<float>(sum);
}

float vec_dot_q8_0(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ8_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  double sum = 0.0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int s = 0;
    for (int j = 0; j < kQK; ++j) s += x[i].qs[j] * y[i].qs[j];
    const float d = fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d);
    sum += d * static_cast<float>(s);
  }
  return static_cast<float>(sum);
}

void set(KernelTable& t, DType type, DType vec_dot_type,
         void (*from_float)(const float*, void*, int64_t),
         void (*to_float)(const void*, float*, int64_t),
         float (*vec_dot)(int64_t, const void*, const void*)) {
  TypeOps& ops = t.types[static_cast<uint32_t>(type)];
  ops.vec_dot_type = vec_dot_type;
  ops.from_float = from_float;
  ops.to_float = to_float;
  ops.vec_dot = vec_dot;
}

}  // namespace

void fill_ref_basic(KernelTable& t) {
  set(t, DType::kF32, DType::kF32, quantize_row_f32, dequantize_row_f32, vec_dot_f32);
  set(t, DType::kF16, DType::kF32, quantize_row_f16, dequantize_row_f16, vec_dot_f16);
  set(t, DType::kBF16, DType::kF32, quantize_row_bf16, dequantize_row_bf16, vec_dot_bf16);
  set(t, DType::kQ4_0, DType::kQ8_0, quantize_row_q4_0, dequantize_row_q4_0, vec_dot_q4_0);
  set(t, DType::kQ4_1, DType::kQ8_1, quantize_row_q4_1, dequantize_row_q4_1, vec_dot_q4_1);
  set(t, DType::kQ5_0, DType::kQ8_0, quantize_row_q5_0, dequantize_row_q5_0, vec_dot_q5_0);
  set(t, DType::kQ5_1, DType::kQ8_1, quantize_row_q5_1, dequantize_row_q5_1, vec_dot_q5_1);
  set(t, DType::kQ8_0, DType::kQ8_0, quantize_row_q8_0, dequantize_row_q8_0, vec_dot_q8_0);
  // Q8_1 is an activation type only: conversions, no dot product of its own.
  set(t, DType::kQ8_1, DType::kQ8_1, quantize_row_q8_1, dequantize_row_q8_1, nullptr);
  // A gemm only for the types that have a batched SIMD variant: a table inherits the
  // reference entries it does not overlay, and a per-pair loop through a function pointer
  // is no faster than matmul's own vec_dot loop.
  t.types[static_cast<uint32_t>(DType::kF16)].gemm = ref::gemm_pairs<vec_dot_f16>;
  t.types[static_cast<uint32_t>(DType::kQ4_0)].gemm = ref::gemm_pairs<vec_dot_q4_0>;
  t.types[static_cast<uint32_t>(DType::kQ8_0)].gemm = ref::gemm_pairs<vec_dot_q8_0>;
}

}  // namespace cohort::kernels
