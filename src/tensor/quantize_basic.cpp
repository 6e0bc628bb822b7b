// PLACEHOLDER: replaced by the real implementation.
#include "tensor/quantize.h"
#include "core/check.h"

namespace cohort {

void quantize_row_f32(const float* x, void* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "quantize_row_f32: not implemented yet");
}

void dequantize_row_f32(const void* x, float* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "dequantize_row_f32: not implemented yet");
}

void quantize_row_f16(const float* x, void* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "quantize_row_f16: not implemented yet");
}

void dequantize_row_f16(const void* x, float* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "dequantize_row_f16: not implemented yet");
}

void quantize_row_bf16(const float* x, void* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "quantize_row_bf16: not implemented yet");
}

void dequantize_row_bf16(const void* x, float* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "dequantize_row_bf16: not implemented yet");
}

void quantize_row_q4_0(const float* x, void* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "quantize_row_q4_0: not implemented yet");
}

void dequantize_row_q4_0(const void* x, float* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "dequantize_row_q4_0: not implemented yet");
}

void quantize_row_q4_1(const float* x, void* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "quantize_row_q4_1: not implemented yet");
}

void dequantize_row_q4_1(const void* x, float* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "dequantize_row_q4_1: not implemented yet");
}

void quantize_row_q5_0(const float* x, void* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "quantize_row_q5_0: not implemented yet");
}

void dequantize_row_q5_0(const void* x, float* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "dequantize_row_q5_0: not implemented yet");
}

void quantize_row_q5_1(const float* x, void* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "quantize_row_q5_1: not implemented yet");
}

void dequantize_row_q5_1(const void* x, float* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "dequantize_row_q5_1: not implemented yet");
}

void quantize_row_q8_0(const float* x, void* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "quantize_row_q8_0: not implemented yet");
}

void dequantize_row_q8_0(const void* x, float* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "dequantize_row_q8_0: not implemented yet");
}

void quantize_row_q8_1(const float* x, void* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "quantize_row_q8_1: not implemented yet");
}

void dequantize_row_q8_1(const void* x, float* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "dequantize_row_q8_1: not implemented yet");
}

}  // namespace cohort
