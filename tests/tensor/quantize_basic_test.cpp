// The reference conversions of the plain float types and the simple quants: hand-built
// blocks decode to hand-computed values (the layouts are bit-exact GGUF), quantizers stay
// within their error bounds on random data, and re-quantizing a decoded row is exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/fp16.h"
#include "core/rng.h"
#include "tensor/dtype.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

namespace cohort {
namespace {

constexpr DType kBasicTypes[] = {DType::kF32,  DType::kF16,  DType::kBF16,
                                 DType::kQ4_0, DType::kQ4_1, DType::kQ5_0,
                                 DType::kQ5_1, DType::kQ8_0, DType::kQ8_1};

std::vector<float> decode(DType t, const void* blocks, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  dequantize_row(t, blocks, y.data(), n);
  return y;
}

std::vector<uint8_t> encode(DType t, const std::vector<float>& x) {
  const auto n = static_cast<int64_t>(x.size());
  std::vector<uint8_t> y(row_bytes(t, n));
  quantize_row(t, x.data(), y.data(), n);
  return y;
}

// Rows of several shapes: normal, uniform, heavy outliers, a zero block, a constant block,
// and a block whose largest magnitude is positive (so Q4_0/Q5_0 scales are negative).
std::vector<float> random_row(uint64_t seed, int64_t n) {
  Rng rng(seed);
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t block = i / kQK;
    float v;
    switch (block % 6) {
      case 0:
        v = rng.normal();
        break;
      case 1:
        v = rng.uniform_f32(-3.0f, 5.0f);
        break;
      case 2:
        v = rng.normal() * (rng.uniform() < 0.05 ? 40.0f : 0.5f);
        break;
      case 3:
        v = block % 12 == 3 ? 0.0f : rng.normal() * 0.02f;
        break;
      case 4:
        v = block % 12 == 4 ? 1.75f : rng.uniform_f32(-1.0f, 1.0f) + 10.0f;
        break;
      default:
        v = (i % kQK == 7) ? 6.0f : rng.uniform_f32(-2.0f, 2.0f);
        break;
    }
    x[static_cast<size_t>(i)] = v;
  }
  return x;
}

TEST(QuantizeBasic, BlockSizesMatchGguf) {
  EXPECT_EQ(dtype_info(DType::kQ4_0).block_bytes, sizeof(BlockQ4_0));
  EXPECT_EQ(dtype_info(DType::kQ4_1).block_bytes, sizeof(BlockQ4_1));
  EXPECT_EQ(dtype_info(DType::kQ5_0).block_bytes, sizeof(BlockQ5_0));
  EXPECT_EQ(dtype_info(DType::kQ5_1).block_bytes, sizeof(BlockQ5_1));
  EXPECT_EQ(dtype_info(DType::kQ8_0).block_bytes, sizeof(BlockQ8_0));
  EXPECT_EQ(dtype_info(DType::kQ8_1).block_bytes, sizeof(BlockQ8_1));
  for (DType t :
       {DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kQ8_0, DType::kQ8_1}) {
    EXPECT_EQ(dtype_info(t).block_elems, 32u) << dtype_name(t);
  }
  EXPECT_EQ(row_bytes(DType::kQ4_0, 4096), 128u * 18);
  EXPECT_EQ(row_bytes(DType::kQ5_1, 64), 2u * 24);
  EXPECT_EQ(row_bytes(DType::kQ8_0, 96), 3u * 34);
  EXPECT_EQ(row_bytes(DType::kF16, 7), 14u);
  EXPECT_EQ(row_bytes(DType::kBF16, 7), 14u);
  EXPECT_EQ(row_bytes(DType::kF32, 7), 28u);
}

TEST(QuantizeBasic, HandBuiltQ4_0) {
  BlockQ4_0 b;
  b.d = f32_to_fp16(0.5f);
  std::memset(b.qs, 0x88, sizeof(b.qs));  // every code 8: value 0
  b.qs[0] = 0x1F;
  b.qs[5] = 0x3C;
  const std::vector<float> y = decode(DType::kQ4_0, &b, 32);
  for (int j = 0; j < 32; ++j) {
    float want = 0.0f;
    if (j == 0) want = (0xF - 8) * 0.5f;
    if (j == 16) want = (0x1 - 8) * 0.5f;
    if (j == 5) want = (0xC - 8) * 0.5f;
    if (j == 21) want = (0x3 - 8) * 0.5f;
    EXPECT_EQ(y[j], want) << "element " << j;
  }
}

TEST(QuantizeBasic, HandBuiltQ4_1) {
  BlockQ4_1 b;
  b.d = f32_to_fp16(0.25f);
  b.m = f32_to_fp16(-1.0f);
  std::memset(b.qs, 0, sizeof(b.qs));
  b.qs[2] = 0xA3;
  b.qs[15] = 0xF0;
  const std::vector<float> y = decode(DType::kQ4_1, &b, 32);
  for (int j = 0; j < 32; ++j) {
    float want = -1.0f;
    if (j == 2) want = 3 * 0.25f - 1.0f;
    if (j == 18) want = 10 * 0.25f - 1.0f;
    if (j == 31) want = 15 * 0.25f - 1.0f;
    EXPECT_EQ(y[j], want) << "element " << j;
  }
}

// qh bits set for elements 3 and 20: bit j of the little-endian uint32.
void set_qh_3_and_20(uint8_t* qh) {
  qh[0] = 0x08;  // bit 3
  qh[1] = 0x00;
  qh[2] = 0x10;  // bit 20 = bit 4 of byte 2
  qh[3] = 0x00;
}

TEST(QuantizeBasic, HandBuiltQ5_0) {
  BlockQ5_0 b;
  b.d = f32_to_fp16(0.5f);
  set_qh_3_and_20(b.qh);
  std::memset(b.qs, 0, sizeof(b.qs));
  b.qs[3] = 0x21;  // element 3: low 1, bit 4 set -> 17; element 19: 2, no bit 4
  b.qs[4] = 0x5F;  // element 4: 15, no bit 4; element 20: 5, bit 4 set -> 21
  const std::vector<float> y = decode(DType::kQ5_0, &b, 32);
  for (int j = 0; j < 32; ++j) {
    float want = -16 * 0.5f;
    if (j == 3) want = (17 - 16) * 0.5f;
    if (j == 19) want = (2 - 16) * 0.5f;
    if (j == 4) want = (15 - 16) * 0.5f;
    if (j == 20) want = (21 - 16) * 0.5f;
    EXPECT_EQ(y[j], want) << "element " << j;
  }
}

TEST(QuantizeBasic, HandBuiltQ5_1) {
  BlockQ5_1 b;
  b.d = f32_to_fp16(0.125f);
  b.m = f32_to_fp16(2.0f);
  set_qh_3_and_20(b.qh);
  std::memset(b.qs, 0, sizeof(b.qs));
  b.qs[3] = 0x21;
  b.qs[4] = 0x5F;
  const std::vector<float> y = decode(DType::kQ5_1, &b, 32);
  for (int j = 0; j < 32; ++j) {
    float want = 2.0f;
    if (j == 3) want = 17 * 0.125f + 2.0f;
    if (j == 19) want = 2 * 0.125f + 2.0f;
    if (j == 4) want = 15 * 0.125f + 2.0f;
    if (j == 20) want = 21 * 0.125f + 2.0f;
    EXPECT_EQ(y[j], want) << "element " << j;
  }
}

TEST(QuantizeBasic, HandBuiltQ8_0AndQ8_1) {
  BlockQ8_0 b;
  b.d = f32_to_fp16(0.25f);
  for (int j = 0; j < 32; ++j) b.qs[j] = static_cast<int8_t>(j - 16);
  b.qs[31] = -128;  // valid in a file even though our quantizer never writes it
  BlockQ8_1 c;
  c.d = b.d;
  c.s = f32_to_fp16(123.0f);  // s does not take part in decoding
  std::memcpy(c.qs, b.qs, sizeof(b.qs));
  const std::vector<float> y0 = decode(DType::kQ8_0, &b, 32);
  const std::vector<float> y1 = decode(DType::kQ8_1, &c, 32);
  for (int j = 0; j < 32; ++j) {
    const float want = j == 31 ? -32.0f : static_cast<float>(j - 16) * 0.25f;
    EXPECT_EQ(y0[j], want) << "element " << j;
    EXPECT_EQ(y1[j], want) << "element " << j;
  }
}

TEST(QuantizeBasic, HandBuiltFloats) {
  const uint16_t h[] = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x8000, 0x3555};
  const std::vector<float> yh = decode(DType::kF16, h, 6);
  EXPECT_EQ(yh[0], 1.0f);
  EXPECT_EQ(yh[1], -2.0f);
  EXPECT_EQ(yh[2], 65504.0f);
  EXPECT_EQ(yh[3], std::ldexp(1.0f, -24));
  EXPECT_EQ(yh[4], 0.0f);
  EXPECT_TRUE(std::signbit(yh[4]));
  EXPECT_NEAR(yh[5], 1.0f / 3, 1e-4f);
  const uint16_t b[] = {0x3F80, 0xC040, 0x4049};
  const std::vector<float> yb = decode(DType::kBF16, b, 3);
  EXPECT_EQ(yb[0], 1.0f);
  EXPECT_EQ(yb[1], -3.0f);
  EXPECT_EQ(yb[2], 3.140625f);
  const float f[] = {1.5f, -0.0f, 3.0e38f};
  const std::vector<float> yf = decode(DType::kF32, f, 3);
  EXPECT_EQ(std::memcmp(yf.data(), f, sizeof(f)), 0);
}

// The encoders, checked against hand-computed blocks.
TEST(QuantizeBasic, EncodesQ4_0ByHand) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 16);  // extreme is -16
  const std::vector<uint8_t> bytes = encode(DType::kQ4_0, x);
  BlockQ4_0 b;
  std::memcpy(&b, bytes.data(), sizeof(b));
  EXPECT_EQ(fp16_to_f32(b.d), 2.0f);  // -16 / -8
  // q = round_half_even(x / 2) + 8, clamped to [0, 15].
  for (int j = 0; j < 16; ++j) {
    const auto code = [&](int e) {
      const int r = static_cast<int>(std::nearbyint(x[e] / 2.0f));
      return std::clamp(r, -8, 7) + 8;
    };
    EXPECT_EQ(b.qs[j], code(j) | code(j + 16) << 4) << "byte " << j;
  }
  EXPECT_EQ(b.qs[0], 0x80);  // element 0: -16 -> 0; element 16: 0 -> 8
  // 15 / 2 = 7.5 rounds to 8 (even) and clamps to code 15.
  EXPECT_EQ(b.qs[15] >> 4, 15);
}

TEST(QuantizeBasic, EncodesQ8_0ByHandWithHalfEvenRounding) {
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;  // amax 127: d = 1
  x[1] = -63.5f;  // -> -64
  x[2] = 0.5f;    // -> 0
  x[3] = 1.5f;    // -> 2
  x[4] = 2.5f;    // -> 2
  x[5] = -2.5f;   // -> -2
  x[6] = 3.49f;   // -> 3
  const std::vector<uint8_t> bytes = encode(DType::kQ8_0, x);
  BlockQ8_0 b;
  std::memcpy(&b, bytes.data(), sizeof(b));
  EXPECT_EQ(fp16_to_f32(b.d), 1.0f);
  const int want[] = {127, -64, 0, 2, 2, -2, 3};
  for (int j = 0; j < 7; ++j) EXPECT_EQ(b.qs[j], want[j]) << "element " << j;
  for (int j = 7; j < 32; ++j) EXPECT_EQ(b.qs[j], 0);

  const std::vector<uint8_t> bytes1 = encode(DType::kQ8_1, x);
  BlockQ8_1 c;
  std::memcpy(&c, bytes1.data(), sizeof(c));
  EXPECT_EQ(c.d, b.d);
  EXPECT_EQ(std::memcmp(c.qs, b.qs, 32), 0);
  EXPECT_EQ(fp16_to_f32(c.s), 127.0f - 64 + 2 + 2 - 2 + 3);
}

// Per element bounds. For a quant type with stored scale d (and min m), an element decodes
// within half a step of its input, except where the code range clamps it: Q4_0/Q5_0 map
// the extreme to -8/-16, so a value of the opposite sign near the extreme clamps to +7/+15.
constexpr float kSlack = 1e-6f;  // relative to the block's largest magnitude

template <typename Block>
void check_symmetric(const std::vector<float>& x, const std::vector<uint8_t>& q, int half) {
  const auto* b = reinterpret_cast<const Block*>(q.data());
  const std::vector<float> y =
      decode(half == 8 ? DType::kQ4_0 : DType::kQ5_0, q.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size() / kQK; ++i) {
    const float d = fp16_to_f32(b[i].d);
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[i * kQK + j]));
    EXPECT_NEAR(std::fabs(d), amax / half, amax / half * 0x1p-11f + 1e-30f) << "block " << i;
    for (int j = 0; j < kQK; ++j) {
      const size_t e = i * kQK + j;
      const float v = d != 0.0f ? x[e] / d : 0.0f;
      const float bound = v > half - 0.5f ? std::fabs(x[e] - (half - 1) * d) + kSlack * amax
                                          : 0.5f * std::fabs(d) + kSlack * amax;
      EXPECT_LE(std::fabs(y[e] - x[e]), bound) << "element " << e;
    }
  }
}

template <typename Block>
void check_affine(const std::vector<float>& x, const std::vector<uint8_t>& q, int max_code) {
  const auto* b = reinterpret_cast<const Block*>(q.data());
  const std::vector<float> y = decode(max_code == 15 ? DType::kQ4_1 : DType::kQ5_1, q.data(),
                                      static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size() / kQK; ++i) {
    const float d = fp16_to_f32(b[i].d), m = fp16_to_f32(b[i].m);
    const float* xb = x.data() + i * kQK;
    const float mn = *std::min_element(xb, xb + kQK), mx = *std::max_element(xb, xb + kQK);
    const float mag = std::max(std::fabs(mn), std::fabs(mx));
    EXPECT_NEAR(m, mn, std::fabs(mn) * 0x1p-11f) << "block " << i;
    EXPECT_NEAR(d, (mx - mn) / max_code, (mx - mn) / max_code * 0x1p-11f) << "block " << i;
    // Half a step, plus the fp16 rounding of m (elements below m clamp to code 0) and of d
    // (15 or 31 steps of it at the top of the range).
    const float bound = 0.5f * d + 0x1p-11f * (std::fabs(mx) + 2.0f * std::fabs(mn)) + kSlack * mag;
    for (int j = 0; j < kQK; ++j) {
      const size_t e = i * kQK + j;
      EXPECT_LE(std::fabs(y[e] - x[e]), bound) << "element " << e;
    }
  }
}

template <typename Block>
void check_q8(const std::vector<float>& x, const std::vector<uint8_t>& q, DType t) {
  const auto* b = reinterpret_cast<const Block*>(q.data());
  const std::vector<float> y = decode(t, q.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size() / kQK; ++i) {
    const float d = fp16_to_f32(b[i].d);
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[i * kQK + j]));
    EXPECT_NEAR(d, amax / 127, amax / 127 * 0x1p-11f) << "block " << i;
    int sum = 0;
    for (int j = 0; j < kQK; ++j) {
      const size_t e = i * kQK + j;
      EXPECT_GE(b[i].qs[j], -127);
      sum += b[i].qs[j];
      EXPECT_LE(std::fabs(y[e] - x[e]), 0.5f * d + kSlack * amax) << "element " << e;
    }
    if constexpr (std::is_same_v<Block, BlockQ8_1>) {
      EXPECT_EQ(b[i].s, f32_to_fp16(d * static_cast<float>(sum))) << "block " << i;
    }
  }
}

TEST(QuantizeBasic, RoundTripErrorBounds) {
  for (int64_t n : {32, 64, 96, 4096 + 32}) {
    const std::vector<float> x = random_row(static_cast<uint64_t>(n), n);
    for (DType t : kBasicTypes) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " n=" + std::to_string(n));
      const std::vector<uint8_t> q = encode(t, x);
      const std::vector<float> y = decode(t, q.data(), n);
      switch (t) {
        case DType::kF32:
          EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * 4), 0);
          break;
        case DType::kF16:
          for (size_t e = 0; e < x.size(); ++e) {
            EXPECT_LE(std::fabs(y[e] - x[e]), std::fabs(x[e]) * 0x1p-11f + 0x1p-25f);
          }
          break;
        case DType::kBF16:
          for (size_t e = 0; e < x.size(); ++e) {
            EXPECT_LE(std::fabs(y[e] - x[e]), std::fabs(x[e]) * 0x1p-8f);
          }
          break;
        case DType::kQ4_0:
          check_symmetric<BlockQ4_0>(x, q, 8);
          break;
        case DType::kQ5_0:
          check_symmetric<BlockQ5_0>(x, q, 16);
          break;
        case DType::kQ4_1:
          check_affine<BlockQ4_1>(x, q, 15);
          break;
        case DType::kQ5_1:
          check_affine<BlockQ5_1>(x, q, 31);
          break;
        case DType::kQ8_0:
          check_q8<BlockQ8_0>(x, q, t);
          break;
        case DType::kQ8_1:
          check_q8<BlockQ8_1>(x, q, t);
          break;
        default:
          FAIL();
      }
    }
  }
}

// Relative RMS error on normal data: a check that the scales are good, not just valid.
TEST(QuantizeBasic, RmsErrorOnNormalData) {
  constexpr int64_t n = 32 * 256;
  Rng rng(7);
  std::vector<float> x(n);
  for (float& v : x) v = rng.normal();
  const struct {
    DType t;
    double max_rel_rms;
  } cases[] = {{DType::kQ4_0, 0.12}, {DType::kQ4_1, 0.10},  {DType::kQ5_0, 0.06},
               {DType::kQ5_1, 0.05}, {DType::kQ8_0, 0.008}, {DType::kQ8_1, 0.008},
               {DType::kF16, 3e-4},  {DType::kBF16, 3e-3}};
  for (const auto& c : cases) {
    const std::vector<float> y = decode(c.t, encode(c.t, x).data(), n);
    double err = 0.0, ref = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      err += (y[i] - x[i]) * static_cast<double>(y[i] - x[i]);
      ref += static_cast<double>(x[i]) * x[i];
    }
    EXPECT_LT(std::sqrt(err / ref), c.max_rel_rms) << dtype_name(c.t);
  }
}

// quantize(dequantize(b)) == b for blocks our quantizer wrote: every block has a code at
// the extreme, so the decoded row implies the same scales and codes.
TEST(QuantizeBasic, RequantizingADecodedRowIsExact) {
  constexpr int64_t n = 32 * 64;
  Rng rng(11);
  std::vector<float> x(n);
  for (float& v : x) v = rng.normal() * 2.0f + 0.3f;
  for (DType t : kBasicTypes) {
    const std::vector<uint8_t> q = encode(t, x);
    const std::vector<float> y = decode(t, q.data(), n);
    const std::vector<uint8_t> q2 = encode(t, y);
    EXPECT_EQ(q, q2) << dtype_name(t);
  }
}

// A zero block decodes to zeros in every type; a constant block is exact where the format
// can hit it (not Q8_0/Q8_1: -0.75 is not 127 times an fp16).
TEST(QuantizeBasic, ZeroAndConstantBlocks) {
  std::vector<float> x(64, 0.0f);
  for (int j = 32; j < 64; ++j) x[j] = -0.75f;
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ4_0, DType::kQ4_1, DType::kQ5_0,
                  DType::kQ5_1}) {
    const std::vector<float> y = decode(t, encode(t, x).data(), 64);
    for (int j = 0; j < 64; ++j) EXPECT_EQ(y[j], x[j]) << dtype_name(t) << " element " << j;
  }
  for (DType t : {DType::kQ8_0, DType::kQ8_1}) {
    const std::vector<float> y = decode(t, encode(t, x).data(), 64);
    for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], 0.0f) << dtype_name(t);
  }
}

}  // namespace
}  // namespace cohort
