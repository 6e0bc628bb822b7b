// Reference conversions between f32 and every block type: the executable specification of
// each layout in quant_blocks.h. Plain scalar C++, deterministic, no allocation.
//
// Contract for every function: n is a multiple of the type's block size (dtype.h);
// x and y do not overlap. quantize_* picks scales that minimise error reasonably (it need
// not match any other tool's choice bit for bit: any valid block decodes identically
// everywhere); dequantize_* is exact to the format.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace cohort {

// Dispatch by type. Types without a quantizer (none of the kWeightTypes) are a bug.
void quantize_row(DType t, const float* x, void* y, int64_t n);
void dequantize_row(DType t, const void* x, float* y, int64_t n);

// Plain floats and the simple quants (tensor/quantize_basic.cpp).
void quantize_row_f32(const float* x, void* y, int64_t n);
void dequantize_row_f32(const void* x, float* y, int64_t n);
void quantize_row_f16(const float* x, void* y, int64_t n);
void dequantize_row_f16(const void* x, float* y, int64_t n);
void quantize_row_bf16(const float* x, void* y, int64_t n);
void dequantize_row_bf16(const void* x, float* y, int64_t n);
void quantize_row_q4_0(const float* x, void* y, int64_t n);
void dequantize_row_q4_0(const void* x, float* y, int64_t n);
void quantize_row_q4_1(const float* x, void* y, int64_t n);
void dequantize_row_q4_1(const void* x, float* y, int64_t n);
void quantize_row_q5_0(const float* x, void* y, int64_t n);
void dequantize_row_q5_0(const void* x, float* y, int64_t n);
void quantize_row_q5_1(const float* x, void* y, int64_t n);
void dequantize_row_q5_1(const void* x, float* y, int64_t n);
void quantize_row_q8_0(const float* x, void* y, int64_t n);
void dequantize_row_q8_0(const void* x, float* y, int64_t n);
void quantize_row_q8_1(const float* x, void* y, int64_t n);
void dequantize_row_q8_1(const void* x, float* y, int64_t n);

// K-quants (tensor/quantize_k.cpp).
void quantize_row_q2_k(const float* x, void* y, int64_t n);
void dequantize_row_q2_k(const void* x, float* y, int64_t n);
void quantize_row_q3_k(const float* x, void* y, int64_t n);
void dequantize_row_q3_k(const void* x, float* y, int64_t n);
void quantize_row_q4_k(const float* x, void* y, int64_t n);
void dequantize_row_q4_k(const void* x, float* y, int64_t n);
void quantize_row_q5_k(const float* x, void* y, int64_t n);
void dequantize_row_q5_k(const void* x, float* y, int64_t n);
void quantize_row_q6_k(const float* x, void* y, int64_t n);
void dequantize_row_q6_k(const void* x, float* y, int64_t n);
void quantize_row_q8_k(const float* x, void* y, int64_t n);
void dequantize_row_q8_k(const void* x, float* y, int64_t n);

}  // namespace cohort
