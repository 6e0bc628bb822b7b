// The GGUF block layouts, byte for byte. Each struct is exactly the on-disk block; fp16
// fields are raw IEEE-half bits (core/fp16.h converts). Value formulas are documented next
// to each struct; tensor/quantize_*.cpp implements them as the reference.
#pragma once

#include <cstdint>

namespace cohort {

inline constexpr int kQK = 32;     // elements per block of the simple quants
inline constexpr int kQK_K = 256;  // elements per super-block of the K-quants
inline constexpr int kKScaleBytes = 12;

// x = (q - 8) * d; q in [0,15]; element j (j < 16) in the low nibble of qs[j], element j+16
// in the high nibble of qs[j].
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
// x = q * d + m; nibble order as Q4_0.
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK / 2];
};
// x = (q - 16) * d; low 4 bits as Q4_0, bit 4 of element j is bit j of the little-endian
// uint32 in qh.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
// x = q * d + m; bits as Q5_0.
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
// x = q * d.
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK];
};
// x = q * d; s = d * sum(q) (activations for Q4_1/Q5_1 dot products).
struct BlockQ8_1 {
  uint16_t d;
  uint16_t s;
  int8_t qs[kQK];
};

// 16 sub-blocks of 16; scales[i]: low 4 bits scale, high 4 bits min;
// x = d * sc * q - dmin * m, q 2-bit.
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];
  uint8_t qs[kQK_K / 4];
  uint16_t d;
  uint16_t dmin;
};
// 16 sub-blocks of 16 with 6-bit signed scales packed in 12 bytes; q 3-bit: low 2 bits in
// qs, high bit in hmask (bit set means no -4 offset); x = d * (sc - 32) * q.
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];
  uint8_t qs[kQK_K / 4];
  uint8_t scales[kKScaleBytes];
  uint16_t d;
};
// 8 sub-blocks of 32 with 6-bit scale and min packed in 12 bytes;
// x = d * sc * q - dmin * m, q 4-bit.
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qs[kQK_K / 2];
};
// As Q4_K with a 5th bit per element in qh.
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
// 16 sub-blocks of 16 with int8 scales; q 6-bit (low 4 in ql, high 2 in qh);
// x = d * sc * (q - 32).
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;
};
// Activations for K-quant dot products: x = d * q; bsums[i] = sum of q over elements
// 16i..16i+15.
struct BlockQ8_K {
  float d;
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);

}  // namespace cohort
