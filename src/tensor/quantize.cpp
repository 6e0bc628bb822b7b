#include "tensor/quantize.h"

#include "core/check.h"

namespace cohort {
namespace {

using QuantizeFn = void (*)(const float*, void*, int64_t);
using DequantizeFn = void (*)(const void*, float*, int64_t);

struct Pair {
  QuantizeFn quantize;
  DequantizeFn dequantize;
};

Pair pair_for(DType t) {
  switch (t) {
    case DType::kF32:
      return {quantize_row_f32, dequantize_row_f32};
    case DType::kF16:
      return {quantize_row_f16, dequantize_row_f16};
    case DType::kBF16:
      return {quantize_row_bf16, dequantize_row_bf16};
    case DType::kQ4_0:
      return {quantize_row_q4_0, dequantize_row_q4_0};
    case DType::kQ4_1:
      return {quantize_row_q4_1, dequantize_row_q4_1};
    case DType::kQ5_0:
      return {quantize_row_q5_0, dequantize_row_q5_0};
    case DType::kQ5_1:
      return {quantize_row_q5_1, dequantize_row_q5_1};
    case DType::kQ8_0:
      return {quantize_row_q8_0, dequantize_row_q8_0};
    case DType::kQ8_1:
      return {quantize_row_q8_1, dequantize_row_q8_1};
    case DType::kQ2_K:
      return {quantize_row_q2_k, dequantize_row_q2_k};
    case DType::kQ3_K:
      return {quantize_row_q3_k, dequantize_row_q3_k};
    case DType::kQ4_K:
      return {quantize_row_q4_k, dequantize_row_q4_k};
    case DType::kQ5_K:
      return {quantize_row_q5_k, dequantize_row_q5_k};
    case DType::kQ6_K:
      return {quantize_row_q6_k, dequantize_row_q6_k};
    case DType::kQ8_K:
      return {quantize_row_q8_k, dequantize_row_q8_k};
  }
  COHORT_CHECK_MSG(false, "quantize: type has no reference conversion");
  return {};
}

}  // namespace

void quantize_row(DType t, const float* x, void* y, int64_t n) {
  COHORT_CHECK(n % dtype_info(t).block_elems == 0);
  pair_for(t).quantize(x, y, n);
}

void dequantize_row(DType t, const void* x, float* y, int64_t n) {
  COHORT_CHECK(n % dtype_info(t).block_elems == 0);
  pair_for(t).dequantize(x, y, n);
}

}  // namespace cohort
