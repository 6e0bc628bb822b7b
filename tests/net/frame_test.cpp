#include "net/frame.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "net_test_util.h"

namespace cohort::net {
namespace {

using testing::connected_pair;

TEST(Frame, RoundTrip) {
  Socket a, b;
  connected_pair(&a, &b);
  const std::string msg = "hello frames";
  ASSERT_TRUE(write_frame(a, 7, msg.data(), msg.size(), 1000, 3).is_ok());
  ASSERT_TRUE(write_frame(a, 8, nullptr, 0, 1000).is_ok());
  auto f = read_frame(b, 1024, 1000);
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(f->type, 7);
  EXPECT_EQ(f->flags, 3);
  EXPECT_EQ(std::string(f->payload.begin(), f->payload.end()), msg);
  auto g = read_frame(b, 1024, 1000);
  ASSERT_TRUE(g.is_ok());
  EXPECT_EQ(g->type, 8);
  EXPECT_TRUE(g->payload.empty());
}

TEST(Frame, HeaderLayoutIsLittleEndianCohf) {
  uint8_t h[kFrameHeaderBytes];
  encode_frame_header(h, 0x0102, 0x0304, 0x05060708);
  const uint8_t want[kFrameHeaderBytes] = {'C', 'O', 'H', 'F', 2, 1, 4, 3, 8, 7, 6, 5};
  EXPECT_EQ(std::memcmp(h, want, sizeof(h)), 0);
  auto d = decode_frame_header(h, kMaxFrameBytes);
  ASSERT_TRUE(d.is_ok());
  EXPECT_EQ(d->type, 0x0102);
  EXPECT_EQ(d->flags, 0x0304);
  EXPECT_EQ(d->payload_bytes, 0x05060708u);
}

TEST(Frame, LargePayload) {
  Socket a, b;
  connected_pair(&a, &b);
  std::vector<uint8_t> big(40u << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i ^ (i >> 11));
  std::thread w([&] { ASSERT_TRUE(write_frame(a, 1, big.data(), big.size(), 10000).is_ok()); });
  auto f = read_frame(b, big.size(), 10000);
  w.join();
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(f->payload, big);
}

TEST(Frame, BadMagicRejected) {
  Socket a, b;
  connected_pair(&a, &b);
  const char http[] = "GET / HTTP/1.1\r\n\r\n";
  ASSERT_TRUE(a.write_all(http, sizeof(http) - 1, 1000).is_ok());
  auto f = read_frame(b, 1024, 1000);
  ASSERT_FALSE(f.is_ok());
  EXPECT_EQ(f.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(f.status().message().rfind("frame: peer ", 0), 0u) << f.status().message();
}

TEST(Frame, OversizeRejectedBeforeAllocating) {
  Socket a, b;
  connected_pair(&a, &b);
  // Claims 4 GiB - 1 and 1 GiB + 1: both over the limits; a reader that allocated the claim
  // would die under ASan or take seconds, and here nothing of the payload is ever sent.
  for (uint32_t claim : {0xFFFFFFFFu, kMaxFrameBytes + 1, 1025u}) {
    uint8_t h[kFrameHeaderBytes];
    encode_frame_header(h, 1, 0, claim);
    ASSERT_TRUE(a.write_all(h, sizeof(h), 1000).is_ok());
    auto f = read_frame(b, 1024, 1000);
    ASSERT_FALSE(f.is_ok());
    EXPECT_EQ(f.status().code(), StatusCode::kCorrupt);
    EXPECT_NE(f.status().message().find(std::to_string(claim)), std::string::npos);
  }
  EXPECT_EQ(write_frame(a, 1, nullptr, size_t{kMaxFrameBytes} + 1, 10).code(),
            StatusCode::kInvalidArgument);
}

TEST(Frame, TimeoutBeforeAnyByteKeepsStreamUsable) {
  Socket a, b;
  connected_pair(&a, &b);
  auto f = read_frame(b, 1024, 30);
  EXPECT_EQ(f.status().code(), StatusCode::kTimeout);
  EXPECT_TRUE(b.is_open());
  ASSERT_TRUE(write_frame(a, 5, "x", 1, 1000).is_ok());
  f = read_frame(b, 1024, 1000);
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(f->type, 5);
}

TEST(Frame, TimeoutMidFrameShutsDown) {
  Socket a, b;
  connected_pair(&a, &b);
  uint8_t h[kFrameHeaderBytes];
  encode_frame_header(h, 1, 0, 100);
  ASSERT_TRUE(a.write_all(h, sizeof(h), 1000).is_ok());
  ASSERT_TRUE(a.write_all("part", 4, 1000).is_ok());
  auto f = read_frame(b, 1024, 50);
  EXPECT_EQ(f.status().code(), StatusCode::kTimeout);
  EXPECT_FALSE(b.is_open());
  f = read_frame(b, 1024, 50);
  EXPECT_EQ(f.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace cohort::net
