// Reference dot products of the K-quants with Q8_K activations: per super-block, integer
// sums per sub-block weighted by the integer sub-block scales, then the two float factors
// (d and dmin, times the activation scale) applied once. The min terms of Q2_K/Q4_K/Q5_K
// use the activation block's bsums, as the format intends. Element order: see
// tensor/quantize_k.cpp.
#include "core/fp16.h"
#include "kernels/ref/gemm_pairs.h"
#include "kernels/registry.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

namespace cohort::kernels {
namespace {

// Sum of q[i] * a[i] over n elements.
inline int32_t dot_i8(const int8_t* q, const int8_t* a, int n) {
  int32_t s = 0;
  for (int i = 0; i < n; ++i) s += static_cast<int32_t>(q[i]) * a[i];
  return s;
}

inline void scale_min_k4(int j, const uint8_t* q, int* sc, int* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

float vec_dot_q2_k(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ2_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int8_t q[kQK_K];
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, j = (e % 128) / 32, l = e % 32;
      q[e] = static_cast<int8_t>((x[i].qs[32 * h + l] >> (2 * j)) & 3);
    }
    int32_t sumi = 0, summ = 0;
    for (int j = 0; j < 16; ++j) {
      sumi += (x[i].scales[j] & 0xF) * dot_i8(q + 16 * j, y[i].qs + 16 * j, 16);
      summ += (x[i].scales[j] >> 4) * y[i].bsums[j];
    }
    const float d = y[i].d * fp16_to_f32(x[i].d);
    const float dmin = y[i].d * fp16_to_f32(x[i].dmin);
    sum += d * static_cast<float>(sumi) - dmin * static_cast<float>(summ);
  }
  return sum;
}

float vec_dot_q3_k(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ3_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int8_t q[kQK_K];
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, j = (e % 128) / 32, l = e % 32;
      const int low = (x[i].qs[32 * h + l] >> (2 * j)) & 3;
      const int high = (x[i].hmask[l] >> (e / 32)) & 1;
      q[e] = static_cast<int8_t>(low - (high ? 0 : 4));
    }
    const uint8_t* s = x[i].scales;
    int32_t sumi = 0;
    for (int j = 0; j < 16; ++j) {
      const int lo = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
      const int sc = (lo | (((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
      sumi += sc * dot_i8(q + 16 * j, y[i].qs + 16 * j, 16);
    }
    sum += y[i].d * fp16_to_f32(x[i].d) * static_cast<float>(sumi);
  }
  return sum;
}

float vec_dot_q4_k(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ4_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int8_t q[kQK_K];
    for (int e = 0; e < kQK_K; ++e) {
      const uint8_t byte = x[i].qs[32 * (e / 64) + e % 32];
      q[e] = static_cast<int8_t>((e % 64) < 32 ? (byte & 0xF) : (byte >> 4));
    }
    int32_t sumi = 0, summ = 0;
    for (int j = 0; j < 8; ++j) {
      int sc, m;
      scale_min_k4(j, x[i].scales, &sc, &m);
      sumi += sc * dot_i8(q + 32 * j, y[i].qs + 32 * j, 32);
      summ += m * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]);
    }
    const float d = y[i].d * fp16_to_f32(x[i].d);
    const float dmin = y[i].d * fp16_to_f32(x[i].dmin);
    sum += d * static_cast<float>(sumi) - dmin * static_cast<float>(summ);
  }
  return sum;
}

float vec_dot_q5_k(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ5_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int8_t q[kQK_K];
    for (int e = 0; e < kQK_K; ++e) {
      const uint8_t byte = x[i].qs[32 * (e / 64) + e % 32];
      const int low = (e % 64) < 32 ? (byte & 0xF) : (byte >> 4);
      q[e] = static_cast<int8_t>(low | (((x[i].qh[e % 32] >> (e / 32)) & 1) << 4));
    }
    int32_t sumi = 0, summ = 0;
    for (int j = 0; j < 8; ++j) {
      int sc, m;
      scale_min_k4(j, x[i].scales, &sc, &m);
      sumi += sc * dot_i8(q + 32 * j, y[i].qs + 32 * j, 32);
      summ += m * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]);
    }
    const float d = y[i].d * fp16_to_f32(x[i].d);
    const float dmin = y[i].d * fp16_to_f32(x[i].dmin);
    sum += d * static_cast<float>(sumi) - dmin * static_cast<float>(summ);
  }
  return sum;
}

float vec_dot_q6_k(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ6_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int8_t q[kQK_K];
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, k = (e % 128) / 32, l = e % 32;
      const uint8_t lbyte = x[i].ql[64 * h + l + 32 * (k & 1)];
      const int low = k >= 2 ? (lbyte >> 4) : (lbyte & 0xF);
      const int high = (x[i].qh[32 * h + l] >> (2 * k)) & 3;
      q[e] = static_cast<int8_t>((low | (high << 4)) - 32);
    }
    int32_t sumi = 0;
    for (int j = 0; j < 16; ++j) sumi += x[i].scales[j] * dot_i8(q + 16 * j, y[i].qs + 16 * j, 16);
    sum += y[i].d * fp16_to_f32(x[i].d) * static_cast<float>(sumi);
  }
  return sum;
}

}  // namespace

void fill_ref_k(KernelTable& t) {
  auto set = [&t](DType type, void (*from)(const float*, void*, int64_t),
                  void (*to)(const void*, float*, int64_t),
                  float (*dot)(int64_t, const void*, const void*)) {
    TypeOps& ops = t.types[static_cast<uint32_t>(type)];
    ops.vec_dot_type = DType::kQ8_K;
    ops.from_float = from;
    ops.to_float = to;
    ops.vec_dot = dot;
  };
  set(DType::kQ2_K, quantize_row_q2_k, dequantize_row_q2_k, vec_dot_q2_k);
  set(DType::kQ3_K, quantize_row_q3_k, dequantize_row_q3_k, vec_dot_q3_k);
  set(DType::kQ4_K, quantize_row_q4_k, dequantize_row_q4_k, vec_dot_q4_k);
  set(DType::kQ5_K, quantize_row_q5_k, dequantize_row_q5_k, vec_dot_q5_k);
  set(DType::kQ6_K, quantize_row_q6_k, dequantize_row_q6_k, vec_dot_q6_k);
  // Q8_K is only ever the activation side: conversions, no dot product of its own.
  set(DType::kQ8_K, quantize_row_q8_k, dequantize_row_q8_k, nullptr);
  // The types of Q4_K_M files have a batched SIMD variant (x86/avx2_gemm_k.cpp); see
  // fill_ref_basic for why the others have none.
  t.types[static_cast<uint32_t>(DType::kQ4_K)].gemm = ref::gemm_pairs<vec_dot_q4_k>;
  t.types[static_cast<uint32_t>(DType::kQ6_K)].gemm = ref::gemm_pairs<vec_dot_q6_k>;
}

}  // namespace cohort::kernels
