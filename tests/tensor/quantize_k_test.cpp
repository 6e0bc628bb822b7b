// K-quant layouts and reference conversions (tensor/quantize_k.cpp). Hand-packed blocks
// decode to hand-computed values (the byte layout ggml/GGUF files use, including the
// element order inside a super-block); random rows round-trip within stated error bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/fp16.h"
#include "core/rng.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

namespace cohort {
namespace {

constexpr DType kKTypes[] = {DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K};

std::vector<float> decode_k(DType t, const void* block) {
  std::vector<float> y(kQK_K);
  dequantize_row(t, block, y.data(), kQK_K);
  return y;
}

void expect_values(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "element " << i;
}

TEST(QuantizeK, Sizes) {
  EXPECT_EQ(dtype_info(DType::kQ2_K).block_bytes, sizeof(BlockQ2_K));
  EXPECT_EQ(dtype_info(DType::kQ3_K).block_bytes, sizeof(BlockQ3_K));
  EXPECT_EQ(dtype_info(DType::kQ4_K).block_bytes, sizeof(BlockQ4_K));
  EXPECT_EQ(dtype_info(DType::kQ5_K).block_bytes, sizeof(BlockQ5_K));
  EXPECT_EQ(dtype_info(DType::kQ6_K).block_bytes, sizeof(BlockQ6_K));
  EXPECT_EQ(dtype_info(DType::kQ8_K).block_bytes, sizeof(BlockQ8_K));
  for (DType t : kKTypes) EXPECT_EQ(dtype_info(t).block_elems, 256u) << dtype_name(t);
  EXPECT_EQ(dtype_info(DType::kQ8_K).block_elems, 256u);
  EXPECT_EQ(row_bytes(DType::kQ4_K, 4096), 16u * 144u);
  EXPECT_EQ(row_bytes(DType::kQ6_K, 512), 2u * 210u);
  // Bits per weight as llama.cpp reports them.
  EXPECT_EQ(sizeof(BlockQ2_K) * 8.0 / 256, 2.625);
  EXPECT_EQ(sizeof(BlockQ3_K) * 8.0 / 256, 3.4375);
  EXPECT_EQ(sizeof(BlockQ4_K) * 8.0 / 256, 4.5);
  EXPECT_EQ(sizeof(BlockQ5_K) * 8.0 / 256, 5.5);
  EXPECT_EQ(sizeof(BlockQ6_K) * 8.0 / 256, 6.5625);
}

// Q4_K: d = 0.5, dmin = 0.25; sub-block 0 has scale 5, min 3; sub-block 5 has scale 45
// (0b10'1101) and min 50 (0b11'0010), which exercise the high-2-bit packing of sub-blocks
// 4..7 into bytes 0..7. All other scales and mins are 0.
void build_q4k_scales(uint16_t* d, uint16_t* dmin, uint8_t* scales) {
  *d = f32_to_fp16(0.5f);
  *dmin = f32_to_fp16(0.25f);
  const uint8_t s[12] = {
      5,     // scale 0 (low 6 bits); top bits: high 2 bits of scale 4 (= 0)
      0x80,  // scale 1 = 0; top bits = high 2 bits of scale 5 (45 >> 4 = 2)
      0,     // scale 2
      0,     // scale 3
      3,     // min 0
      0xC0,  // min 1 = 0; top bits = high 2 bits of min 5 (50 >> 4 = 3)
      0,     // min 2
      0,     // min 3
      0,     // sub-block 4: scale low nibble 0, min low nibble 0
      0x2D,  // sub-block 5: scale low nibble 13 (45 & 15), min low nibble 2 (50 & 15)
      0,     // sub-block 6
      0,     // sub-block 7
  };
  std::memcpy(scales, s, 12);
}

TEST(QuantizeK, Q4KHandBuiltBlock) {
  BlockQ4_K b{};
  build_q4k_scales(&b.d, &b.dmin, b.scales);
  // Chunk c of 64 elements uses qs[32c..32c+31]: low nibbles are elements 64c..64c+31,
  // high nibbles 64c+32..64c+63.
  b.qs[0] = 7;      // element 0 (sub-block 0)
  b.qs[31] = 15;    // element 31 (sub-block 0)
  b.qs[64] = 0x94;  // element 128 = 4 (sub-block 4, scale 0), element 160 = 9 (sub-block 5)
  b.qs[95] = 0x10;  // element 191 = 1 (sub-block 5)
  std::vector<float> want(kQK_K, 0.0f);
  for (int e = 0; e < 32; ++e) want[e] = -0.75f;     // 0.5*5*0 - 0.25*3
  for (int e = 160; e < 192; ++e) want[e] = -12.5f;  // 0.5*45*0 - 0.25*50
  want[0] = 16.75f;                                  // 0.5*5*7 - 0.75
  want[31] = 36.75f;                                 // 0.5*5*15 - 0.75
  want[160] = 190.0f;                                // 0.5*45*9 - 12.5
  want[191] = 10.0f;                                 // 0.5*45*1 - 12.5
  expect_values(decode_k(DType::kQ4_K, &b), want);
}

TEST(QuantizeK, Q5KHandBuiltBlock) {
  BlockQ5_K b{};
  build_q4k_scales(&b.d, &b.dmin, b.scales);
  b.qs[0] = 7;
  b.qs[31] = 15;
  b.qs[64] = 0x94;
  b.qs[95] = 0x10;
  // The 5th bit of element e is bit e / 32 of qh[e % 32].
  b.qh[0] = 0x21;   // element 0 (bit 0) and element 160 (bit 5)
  b.qh[31] = 0x20;  // element 191 (bit 5)
  b.qh[1] = 0x02;   // element 33: sub-block 1, scale 0 and min 0, still decodes to 0
  std::vector<float> want(kQK_K, 0.0f);
  for (int e = 0; e < 32; ++e) want[e] = -0.75f;
  for (int e = 160; e < 192; ++e) want[e] = -12.5f;
  want[0] = 56.75f;    // 0.5*5*(7+16) - 0.75
  want[31] = 36.75f;   // 0.5*5*15 - 0.75
  want[160] = 550.0f;  // 0.5*45*(9+16) - 12.5
  want[191] = 370.0f;  // 0.5*45*(1+16) - 12.5
  expect_values(decode_k(DType::kQ5_K, &b), want);
}

// Q6_K: d = 0.5, scale 0 = 3, scale 13 = -7, others 0. Element 128h + 32k + l takes its
// low 4 bits from ql[64h + l + 32(k & 1)] (high nibble when k >= 2) and its top 2 bits
// from bits 2k..2k+1 of qh[32h + l].
TEST(QuantizeK, Q6KHandBuiltBlock) {
  BlockQ6_K b{};
  b.d = f32_to_fp16(0.5f);
  b.scales[0] = 3;
  b.scales[13] = -7;
  b.ql[0] = 5;      // element 0 low bits
  b.qh[0] = 0x02;   // element 0 top bits = 2: q = 5 + 32 - 32 = 5
  b.ql[80] = 0xA3;  // element 208 (h 1, k 2, l 16) low bits 10; element 144 (sub-block 9) 3
  b.qh[48] = 0x31;  // element 208 top bits 3 (bits 4-5); element 144 top bits 1
  b.ql[95] = 0x10;  // element 223 (h 1, k 2, l 31) low bits 1
  b.qh[63] = 0x10;  // element 223 top bits 1: q = 17 - 32 = -15
  std::vector<float> want(kQK_K, 0.0f);
  for (int e = 0; e < 16; ++e) want[e] = 0.5f * 3 * -32;      // q = 0 - 32
  for (int e = 208; e < 224; ++e) want[e] = 0.5f * -7 * -32;  // 112
  want[0] = 7.5f;                                             // 0.5*3*5
  want[208] = -91.0f;                                         // 0.5*-7*(58-32)
  want[223] = 52.5f;                                          // 0.5*-7*-15
  expect_values(decode_k(DType::kQ6_K, &b), want);
}

// Q3_K: d = 0.25; scale 0 = -5 (stored 27 = 0b01'1011), scale 13 = 20 (stored 52 =
// 0b11'0100), all others 0 (stored 32 = 0b10'0000). Low 4 bits: byte j (j < 8) low nibble,
// byte j - 8 high nibble (j >= 8); high 2 bits: bits 2(j/4) of byte 8 + j % 4.
TEST(QuantizeK, Q3KHandBuiltBlock) {
  BlockQ3_K b{};
  b.d = f32_to_fp16(0.25f);
  const uint8_t s[12] = {
      0x0B,  // scale 0 low 11; scale 8 low 0
      0,     // scales 1, 9
      0,     // scales 2, 10
      0,     // scales 3, 11
      0,     // scales 4, 12
      0x40,  // scale 5 low 0; scale 13 low 4
      0,     // scales 6, 14
      0,     // scales 7, 15
      0xA9,  // high bits of scales 0, 4, 8, 12: 1, 2, 2, 2
      0xEA,  // scales 1, 5, 9, 13: 2, 2, 2, 3
      0xAA,  // scales 2, 6, 10, 14
      0xAA,  // scales 3, 7, 11, 15
  };
  std::memcpy(b.scales, s, 12);
  // Element 128h + 32j + l: low 2 bits at bits 2j of qs[32h + l]; hmask[e % 32] bit e / 32
  // set means no -4.
  b.qs[0] = 3;
  b.hmask[0] = 0x01;   // element 0: q = 3
  b.qs[1] = 1;         // element 1: q = 1 - 4 = -3
  b.qs[48] = 0x23;     // element 208 (h 1, j 2, l 16) low 2; element 144 (sub-block 9) 3
  b.hmask[16] = 0x40;  // element 208 (bit 6): q = 2
  b.hmask[31] = 0x40;  // element 223: q = 0
  std::vector<float> want(kQK_K, 0.0f);
  for (int e = 0; e < 16; ++e) want[e] = 0.25f * -5 * -4;     // 5
  for (int e = 208; e < 224; ++e) want[e] = 0.25f * 20 * -4;  // -20
  want[0] = -3.75f;                                           // 0.25*-5*3
  want[1] = 3.75f;                                            // 0.25*-5*-3
  want[208] = 10.0f;
  want[223] = 0.0f;
  expect_values(decode_k(DType::kQ3_K, &b), want);
}

// Q2_K: d = 0.5, dmin = 0.25; scales byte = scale | min << 4. Element 128h + 32j + l is at
// bits 2j of qs[32h + l].
TEST(QuantizeK, Q2KHandBuiltBlock) {
  BlockQ2_K b{};
  b.d = f32_to_fp16(0.5f);
  b.dmin = f32_to_fp16(0.25f);
  b.scales[0] = 0x23;   // scale 3, min 2
  b.scales[13] = 0x7A;  // scale 10, min 7
  b.qs[0] = 3;          // element 0
  b.qs[48] = 0x1C;      // element 208 (h 1, j 2, l 16) = 1; element 176 (sub-block 11) = 3
  b.qs[63] = 0x30;      // element 223 = 3
  std::vector<float> want(kQK_K, 0.0f);
  for (int e = 0; e < 16; ++e) want[e] = -0.5f;      // -0.25*2
  for (int e = 208; e < 224; ++e) want[e] = -1.75f;  // -0.25*7
  want[0] = 4.0f;                                    // 0.5*3*3 - 0.5
  want[208] = 3.25f;                                 // 0.5*10*1 - 1.75
  want[223] = 13.25f;                                // 0.5*10*3 - 1.75
  expect_values(decode_k(DType::kQ2_K, &b), want);
}

TEST(QuantizeK, Q8KIsScaledRoundingWithBlockSums) {
  std::vector<float> x(512);
  Rng rng(7);
  for (float& v : x) v = rng.normal();
  x[300] = -9.0f;  // the second block's amax
  std::vector<BlockQ8_K> b(2);
  quantize_row_q8_k(x.data(), b.data(), 512);
  EXPECT_EQ(b[1].d, 9.0f / 127.0f);
  EXPECT_EQ(b[1].qs[300 - 256], -127);
  for (int i = 0; i < 2; ++i) {
    float amax = 0;
    for (int e = 0; e < kQK_K; ++e) amax = std::fmax(amax, std::fabs(x[256 * i + e]));
    EXPECT_EQ(b[i].d, amax / 127.0f);
    for (int e = 0; e < kQK_K; ++e) {
      EXPECT_EQ(b[i].qs[e], std::nearbyint(x[256 * i + e] * (127.0f / amax))) << e;
      EXPECT_LE(std::fabs(b[i].d * b[i].qs[e] - x[256 * i + e]), b[i].d * 0.5001f);
    }
    for (int g = 0; g < 16; ++g) {
      int s = 0;
      for (int l = 0; l < 16; ++l) s += b[i].qs[16 * g + l];
      EXPECT_EQ(b[i].bsums[g], s);
    }
  }
  std::vector<float> y(512);
  dequantize_row_q8_k(b.data(), y.data(), 512);
  for (int e = 0; e < 512; ++e) EXPECT_EQ(y[e], b[e / 256].d * b[e / 256].qs[e % 256]);
  // All-zero blocks stay zero.
  std::vector<float> z(256, 0.0f);
  quantize_row_q8_k(z.data(), b.data(), 256);
  EXPECT_EQ(b[0].d, 0.0f);
  for (int g = 0; g < 16; ++g) EXPECT_EQ(b[0].bsums[g], 0);
}

double relative_rms_error(DType t, const std::vector<float>& x) {
  std::vector<uint8_t> q(row_bytes(t, static_cast<int64_t>(x.size())));
  std::vector<float> y(x.size());
  quantize_row(t, x.data(), q.data(), static_cast<int64_t>(x.size()));
  dequantize_row(t, q.data(), y.data(), static_cast<int64_t>(x.size()));
  double err = 0, ref = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    err += (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
    ref += static_cast<double>(x[i]) * x[i];
  }
  return std::sqrt(err / ref);
}

// Relative RMS error bounds on Gaussian data (error RMS over data RMS). With one scale per
// 16 or 32 elements, a b-bit grid costs about range / (2^b sqrt(12)), halving per bit; this
// quantizer measures 0.267 / 0.142 / 0.070 / 0.035 / 0.017 for Q2..Q6_K and 0.0069 for
// Q8_K on the row below, and the bounds leave ~12-15% slack for other seeds.
double bound_for(DType t) {
  switch (t) {
    case DType::kQ2_K:
      return 0.30;
    case DType::kQ3_K:
      return 0.16;
    case DType::kQ4_K:
      return 0.08;
    case DType::kQ5_K:
      return 0.04;
    case DType::kQ6_K:
      return 0.02;
    case DType::kQ8_K:
      return 0.008;
    default:
      return 0;
  }
}

TEST(QuantizeK, RoundTripErrorOnGaussianRows) {
  Rng rng(42);
  std::vector<float> x(4096);
  for (float& v : x) v = rng.normal() * 0.02f;  // typical weight magnitude
  for (DType t : kKTypes) {
    const double e = relative_rms_error(t, x);
    EXPECT_LT(e, bound_for(t)) << dtype_name(t);
  }
  EXPECT_LT(relative_rms_error(DType::kQ8_K, x), bound_for(DType::kQ8_K));
}

// Shifted data (all positive, or a large common offset) exercises the mins of the
// asymmetric types and the sign handling of the symmetric ones; a few outliers exercise the
// scale search.
TEST(QuantizeK, RoundTripErrorOnShiftedAndOutlierRows) {
  Rng rng(3);
  std::vector<float> pos(2048), outl(2048);
  for (float& v : pos) v = rng.uniform_f32(0.5f, 1.5f);
  for (float& v : outl) v = rng.normal();
  for (int i = 0; i < 2048; i += 97) outl[static_cast<size_t>(i)] *= 12.0f;
  for (DType t : kKTypes) {
    // Uniform data on [0.5, 1.5]: RMS 1.04, so the relative error is that of a unit range.
    EXPECT_LT(relative_rms_error(t, pos), bound_for(t)) << dtype_name(t) << " shifted";
    EXPECT_LT(relative_rms_error(t, outl), 1.8 * bound_for(t)) << dtype_name(t) << " outliers";
  }
}

TEST(QuantizeK, ZerosAndConstantsDecodeExactly) {
  std::vector<float> z(512, 0.0f), c(512, -1.0f), y(512);
  for (DType t : kKTypes) {
    std::vector<uint8_t> q(row_bytes(t, 512));
    quantize_row(t, z.data(), q.data(), 512);
    dequantize_row(t, q.data(), y.data(), 512);
    for (float v : y) ASSERT_EQ(v, 0.0f) << dtype_name(t);
    quantize_row(t, c.data(), q.data(), 512);
    dequantize_row(t, q.data(), y.data(), 512);
    for (float v : y) ASSERT_NEAR(v, -1.0f, 0.01f) << dtype_name(t);
  }
}

TEST(QuantizeK, QuantizeIsDeterministicAndReencodesItsOwnOutput) {
  Rng rng(11);
  std::vector<float> x(1024), y(1024), y2(1024);
  for (float& v : x) v = rng.normal();
  for (DType t : kKTypes) {
    std::vector<uint8_t> a(row_bytes(t, 1024)), b(row_bytes(t, 1024));
    quantize_row(t, x.data(), a.data(), 1024);
    quantize_row(t, x.data(), b.data(), 1024);
    EXPECT_EQ(a, b) << dtype_name(t);
    // Values already on a K-quant grid quantize back to (almost) the same values.
    dequantize_row(t, a.data(), y.data(), 1024);
    quantize_row(t, y.data(), b.data(), 1024);
    dequantize_row(t, b.data(), y2.data(), 1024);
    double err = 0, ref = 0;
    for (int i = 0; i < 1024; ++i) {
      err += (y[i] - y2[i]) * (y[i] - y2[i]);
      ref += y[i] * y[i];
    }
    EXPECT_LT(std::sqrt(err / ref), bound_for(t)) << dtype_name(t);
  }
}

}  // namespace
}  // namespace cohort
