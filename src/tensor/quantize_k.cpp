// PLACEHOLDER: replaced by the real implementation.
#include "tensor/quantize.h"
#include "core/check.h"

namespace cohort {

void quantize_row_q2_k(const float* x, void* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "quantize_row_q2_k: not implemented yet");
}

void dequantize_row_q2_k(const void* x, float* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "dequantize_row_q2_k: not implemented yet");
}

void quantize_row_q3_k(const float* x, void* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "quantize_row_q3_k: not implemented yet");
}

void dequantize_row_q3_k(const void* x, float* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "dequantize_row_q3_k: not implemented yet");
}

void quantize_row_q4_k(const float* x, void* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "quantize_row_q4_k: not implemented yet");
}

void dequantize_row_q4_k(const void* x, float* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "dequantize_row_q4_k: not implemented yet");
}

void quantize_row_q5_k(const float* x, void* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "quantize_row_q5_k: not implemented yet");
}

void dequantize_row_q5_k(const void* x, float* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "dequantize_row_q5_k: not implemented yet");
}

void quantize_row_q6_k(const float* x, void* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "quantize_row_q6_k: not implemented yet");
}

void dequantize_row_q6_k(const void* x, float* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "dequantize_row_q6_k: not implemented yet");
}

void quantize_row_q8_k(const float* x, void* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "quantize_row_q8_k: not implemented yet");
}

void dequantize_row_q8_k(const void* x, float* y, int64_t n) {
  (void)x; (void)y; (void)n;
  COHORT_CHECK_MSG(false, "dequantize_row_q8_k: not implemented yet");
}

}  // namespace cohort
