// Base64 as RFC 4648 defines it (its test vectors), and floats as the little-endian float32
// bytes OpenAI's SDKs decode.
#include "api/base64.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cohort::api {
namespace {

std::string encode(const std::string& s) {
  return base64_encode(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
}

TEST(Base64, Rfc4648Vectors) {
  EXPECT_EQ(encode(""), "");
  EXPECT_EQ(encode("f"), "Zg==");
  EXPECT_EQ(encode("fo"), "Zm8=");
  EXPECT_EQ(encode("foo"), "Zm9v");
  EXPECT_EQ(encode("foob"), "Zm9vYg==");
  EXPECT_EQ(encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(encode("foobar"), "Zm9vYmFy");
  const std::vector<uint8_t> high = {0xff, 0xfe, 0xfd};
  EXPECT_EQ(base64_encode(high), "//79");
}

TEST(Base64, FloatsAreLittleEndianFloat32) {
  // 1.0f is 0x3f800000: bytes 00 00 80 3f.
  const std::vector<float> one = {1.0f};
  EXPECT_EQ(base64_floats(one), "AACAPw==");
  // -2.0f is 0xc0000000, 0.5f 0x3f000000: bytes 00 00 00 c0 00 00 00 3f.
  const std::vector<float> two = {-2.0f, 0.5f};
  EXPECT_EQ(base64_floats(two), "AAAAwAAAAD8=");
  EXPECT_EQ(base64_floats({}), "");
}

}  // namespace
}  // namespace cohort::api
