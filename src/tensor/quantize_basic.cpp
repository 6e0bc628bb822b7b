// Reference conversions for the plain float types and the simple 32-element quants (Q4_0,
// Q4_1, Q5_0, Q5_1, Q8_0, Q8_1). Layouts and value formulas are in quant_blocks.h.
//
// Quantizers choose the scale from the block's extremes, store it as fp16, then quantize
// against the stored (rounded) scale with round-half-to-even and clamp to the code range.
// Quantizing against the rounded scale keeps every element within half a step of the
// decoded value; kernels/x86 reproduces the Q8_0/Q8_1 activation quantizers bit for bit,
// so any change to the rounding here must be mirrored there.
#include <cmath>
#include <cstring>

#include "core/fp16.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

namespace cohort {
namespace {

// Round half to even under the default floating-point environment.
inline float round_even(float v) { return std::nearbyint(v); }

inline float clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Reciprocal of a scale, 0 for a zero scale (an all-zero block quantizes to zeros).
inline float inverse(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

// The element of largest magnitude with its sign (the first one on ties).
float signed_absmax(const float* x) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < kQK; ++j) {
    const float a = std::fabs(x[j]);
    if (a > amax) {
      amax = a;
      max = x[j];
    }
  }
  return max;
}

void min_max(const float* x, float* mn, float* mx) {
  float lo = x[0], hi = x[0];
  for (int j = 1; j < kQK; ++j) {
    lo = x[j] < lo ? x[j] : lo;
    hi = x[j] > hi ? x[j] : hi;
  }
  *mn = lo;
  *mx = hi;
}

uint32_t load_qh(const uint8_t* qh) {
  return static_cast<uint32_t>(qh[0]) | static_cast<uint32_t>(qh[1]) << 8 |
         static_cast<uint32_t>(qh[2]) << 16 | static_cast<uint32_t>(qh[3]) << 24;
}

void store_qh(uint8_t* qh, uint32_t h) {
  for (int k = 0; k < 4; ++k) qh[k] = static_cast<uint8_t>(h >> (8 * k));
}

// Codes q[j] in [0, 15] (or [0, 31]: bit 4 goes to qh) packed in the GGUF nibble order.
void pack_codes(const int* q, uint8_t* qs, uint8_t* qh) {
  uint32_t h = 0;
  for (int j = 0; j < kQK / 2; ++j) {
    const int lo = q[j], hi = q[j + kQK / 2];
    qs[j] = static_cast<uint8_t>((lo & 0xF) | (hi & 0xF) << 4);
    h |= static_cast<uint32_t>((lo >> 4) & 1) << j;
    h |= static_cast<uint32_t>((hi >> 4) & 1) << (j + kQK / 2);
  }
  if (qh != nullptr) store_qh(qh, h);
}

// The inverse of pack_codes: 32 codes from the nibbles and, when qh is given, the 5th bits.
void unpack_codes(const uint8_t* qs, const uint8_t* qh, int* q) {
  const uint32_t h = qh != nullptr ? load_qh(qh) : 0;
  for (int j = 0; j < kQK / 2; ++j) {
    q[j] = (qs[j] & 0xF) | static_cast<int>((h >> j) & 1) << 4;
    q[j + kQK / 2] = (qs[j] >> 4) | static_cast<int>((h >> (j + kQK / 2)) & 1) << 4;
  }
}

// Symmetric types (Q4_0, Q5_0): d = max / -half_range, so the extreme maps to -half_range.
uint16_t quantize_symmetric(const float* x, int half_range, int* q) {
  const uint16_t dh = f32_to_fp16(signed_absmax(x) / static_cast<float>(-half_range));
  const float id = inverse(fp16_to_f32(dh));
  const float lo = static_cast<float>(-half_range), hi = static_cast<float>(half_range - 1);
  for (int j = 0; j < kQK; ++j) {
    q[j] = static_cast<int>(clampf(round_even(x[j] * id), lo, hi)) + half_range;
  }
  return dh;
}

// Affine types (Q4_1, Q5_1): x = q * d + m with m = min, d = (max - min) / max_code.
void quantize_affine(const float* x, int max_code, uint16_t* dh, uint16_t* mh, int* q) {
  float mn, mx;
  min_max(x, &mn, &mx);
  *dh = f32_to_fp16((mx - mn) / static_cast<float>(max_code));
  *mh = f32_to_fp16(mn);
  const float id = inverse(fp16_to_f32(*dh));
  const float m = fp16_to_f32(*mh);
  for (int j = 0; j < kQK; ++j) {
    q[j] =
        static_cast<int>(clampf(round_even((x[j] - m) * id), 0.0f, static_cast<float>(max_code)));
  }
}

// Q8_0/Q8_1 codes: d = amax / 127; returns the fp16 scale and the sum of the codes.
uint16_t quantize_q8(const float* x, int8_t* qs, int* sum) {
  float amax = 0.0f;
  for (int j = 0; j < kQK; ++j) amax = std::fmax(amax, std::fabs(x[j]));
  const uint16_t dh = f32_to_fp16(amax / 127.0f);
  const float id = inverse(fp16_to_f32(dh));
  int s = 0;
  for (int j = 0; j < kQK; ++j) {
    const int v = static_cast<int>(clampf(round_even(x[j] * id), -127.0f, 127.0f));
    qs[j] = static_cast<int8_t>(v);
    s += v;
  }
  *sum = s;
  return dh;
}

}  // namespace

void quantize_row_f32(const float* x, void* y, int64_t n) {
  std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
}

void dequantize_row_f32(const void* x, float* y, int64_t n) {
  std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
}

void quantize_row_f16(const float* x, void* y, int64_t n) {
  auto* out = static_cast<uint16_t*>(y);
  for (int64_t i = 0; i < n; ++i) out[i] = f32_to_fp16(x[i]);
}

void dequantize_row_f16(const void* x, float* y, int64_t n) {
  const auto* in = static_cast<const uint16_t*>(x);
  for (int64_t i = 0; i < n; ++i) y[i] = fp16_to_f32(in[i]);
}

void quantize_row_bf16(const float* x, void* y, int64_t n) {
  auto* out = static_cast<uint16_t*>(y);
  for (int64_t i = 0; i < n; ++i) out[i] = f32_to_bf16(x[i]);
}

void dequantize_row_bf16(const void* x, float* y, int64_t n) {
  const auto* in = static_cast<const uint16_t*>(x);
  for (int64_t i = 0; i < n; ++i) y[i] = bf16_to_f32(in[i]);
}

void quantize_row_q4_0(const float* x, void* y, int64_t n) {
  auto* b = static_cast<BlockQ4_0*>(y);
  int q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    b[i].d = quantize_symmetric(x, 8, q);
    pack_codes(q, b[i].qs, nullptr);
  }
}

void dequantize_row_q4_0(const void* x, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ4_0*>(x);
  int q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
    const float d = fp16_to_f32(b[i].d);
    unpack_codes(b[i].qs, nullptr, q);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(q[j] - 8) * d;
  }
}

void quantize_row_q4_1(const float* x, void* y, int64_t n) {
  auto* b = static_cast<BlockQ4_1*>(y);
  int q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    quantize_affine(x, 15, &b[i].d, &b[i].m, q);
    pack_codes(q, b[i].qs, nullptr);
  }
}

void dequantize_row_q4_1(const void* x, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ4_1*>(x);
  int q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
    const float d = fp16_to_f32(b[i].d), m = fp16_to_f32(b[i].m);
    unpack_codes(b[i].qs, nullptr, q);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(q[j]) * d + m;
  }
}

void quantize_row_q5_0(const float* x, void* y, int64_t n) {
  auto* b = static_cast<BlockQ5_0*>(y);
  int q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    b[i].d = quantize_symmetric(x, 16, q);
    pack_codes(q, b[i].qs, b[i].qh);
  }
}

void dequantize_row_q5_0(const void* x, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ5_0*>(x);
  int q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
    const float d = fp16_to_f32(b[i].d);
    unpack_codes(b[i].qs, b[i].qh, q);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(q[j] - 16) * d;
  }
}

void quantize_row_q5_1(const float* x, void* y, int64_t n) {
  auto* b = static_cast<BlockQ5_1*>(y);
  int q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    quantize_affine(x, 31, &b[i].d, &b[i].m, q);
    pack_codes(q, b[i].qs, b[i].qh);
  }
}

void dequantize_row_q5_1(const void* x, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ5_1*>(x);
  int q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
    const float d = fp16_to_f32(b[i].d), m = fp16_to_f32(b[i].m);
    unpack_codes(b[i].qs, b[i].qh, q);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(q[j]) * d + m;
  }
}

void quantize_row_q8_0(const float* x, void* y, int64_t n) {
  auto* b = static_cast<BlockQ8_0*>(y);
  int sum;
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) b[i].d = quantize_q8(x, b[i].qs, &sum);
}

void dequantize_row_q8_0(const void* x, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ8_0*>(x);
  for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(b[i].qs[j]) * d;
  }
}

void quantize_row_q8_1(const float* x, void* y, int64_t n) {
  auto* b = static_cast<BlockQ8_1*>(y);
  int sum;
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    b[i].d = quantize_q8(x, b[i].qs, &sum);
    b[i].s = f32_to_fp16(fp16_to_f32(b[i].d) * static_cast<float>(sum));
  }
}

void dequantize_row_q8_1(const void* x, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ8_1*>(x);
  for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(b[i].qs[j]) * d;
  }
}

}  // namespace cohort
