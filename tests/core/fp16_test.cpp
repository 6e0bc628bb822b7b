#include "core/fp16.h"

#include <gtest/gtest.h>

#include <cmath>

namespace cohort {
namespace {

TEST(Fp16, EveryHalfRoundTripsThroughF32) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = fp16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(fp16_to_f32(f32_to_fp16(f))));
      continue;
    }
    EXPECT_EQ(f32_to_fp16(f), h) << "half bits " << h;
  }
}

TEST(Fp16, RoundsToNearestEven) {
  EXPECT_EQ(fp16_to_f32(f32_to_fp16(1.0f + 1.0f / 2048)), 1.0f);  // halfway: down to even
  EXPECT_EQ(fp16_to_f32(f32_to_fp16(1.0f + 3.0f / 2048)), 1.0f + 2.0f / 1024);  // up to even
  EXPECT_TRUE(std::isinf(fp16_to_f32(f32_to_fp16(70000.0f))));
  EXPECT_EQ(fp16_to_f32(f32_to_fp16(65504.0f)), 65504.0f);
  EXPECT_EQ(fp16_to_f32(f32_to_fp16(5.96046448e-8f)), 5.96046448e-8f);  // smallest subnormal
}

TEST(Bf16, RoundTripsAndRounds) {
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(1.5f)), 1.5f);
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(-3.25f)), -3.25f);
  EXPECT_NEAR(bf16_to_f32(f32_to_bf16(3.14159f)), 3.14159f, 0.02f);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(NAN))));
}

}  // namespace
}  // namespace cohort
