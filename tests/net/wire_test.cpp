#include "net/wire.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace cohort::net {
namespace {

TEST(Wire, RoundTripsEveryFieldLittleEndian) {
  WireWriter w;
  const uint8_t blob[5] = {1, 2, 3, 4, 5};
  w.u8(0xAB).u16(0x1234).u32(0xDEADBEEF).u64(0x0102030405060708ull).i32(-7).i64(-1234567890123);
  w.f32(1.5f).f64(-2.25).str("hello").bytes(blob, sizeof(blob)).raw("xy", 2);
  const std::vector<uint8_t>& d = w.data();
  // Spot-check the byte order.
  EXPECT_EQ(d[0], 0xAB);
  EXPECT_EQ(d[1], 0x34);
  EXPECT_EQ(d[2], 0x12);
  EXPECT_EQ(d[3], 0xEF);
  EXPECT_EQ(d[6], 0xDE);

  WireReader r(d);
  uint8_t a;
  uint16_t b;
  uint32_t c;
  uint64_t e;
  int32_t f;
  int64_t g;
  float h;
  double i;
  std::string s;
  std::vector<uint8_t> bytes;
  char raw[2];
  ASSERT_TRUE(r.u8(&a).is_ok());
  ASSERT_TRUE(r.u16(&b).is_ok());
  ASSERT_TRUE(r.u32(&c).is_ok());
  ASSERT_TRUE(r.u64(&e).is_ok());
  ASSERT_TRUE(r.i32(&f).is_ok());
  ASSERT_TRUE(r.i64(&g).is_ok());
  ASSERT_TRUE(r.f32(&h).is_ok());
  ASSERT_TRUE(r.f64(&i).is_ok());
  ASSERT_TRUE(r.str(&s, 16).is_ok());
  ASSERT_TRUE(r.bytes(&bytes, 16).is_ok());
  ASSERT_TRUE(r.raw(raw, 2).is_ok());
  EXPECT_TRUE(r.expect_end().is_ok());
  EXPECT_EQ(a, 0xAB);
  EXPECT_EQ(b, 0x1234);
  EXPECT_EQ(c, 0xDEADBEEFu);
  EXPECT_EQ(e, 0x0102030405060708ull);
  EXPECT_EQ(f, -7);
  EXPECT_EQ(g, -1234567890123);
  EXPECT_EQ(h, 1.5f);
  EXPECT_EQ(i, -2.25);
  EXPECT_EQ(s, "hello");
  EXPECT_EQ(bytes, std::vector<uint8_t>(blob, blob + 5));
  EXPECT_EQ(raw[0], 'x');
  EXPECT_EQ(raw[1], 'y');
}

TEST(Wire, FloatBitsSurvive) {
  WireWriter w;
  w.f32(std::numeric_limits<float>::infinity()).f64(std::nan("")).f32(-0.0f);
  WireReader r(w.data());
  float a, c;
  double b;
  ASSERT_TRUE(r.f32(&a).is_ok());
  ASSERT_TRUE(r.f64(&b).is_ok());
  ASSERT_TRUE(r.f32(&c).is_ok());
  EXPECT_TRUE(std::isinf(a));
  EXPECT_TRUE(std::isnan(b));
  EXPECT_TRUE(std::signbit(c));
}

TEST(Wire, TruncationAndLimitsAreCorrupt) {
  WireWriter w;
  w.u32(7).str("abcdef");
  const std::vector<uint8_t> d = w.take();
  EXPECT_TRUE(w.data().empty());
  for (size_t n = 0; n < d.size(); ++n) {
    WireReader r(d.data(), n);
    uint32_t v = 0;
    std::string s;
    Status st = r.u32(&v);
    if (st.is_ok()) st = r.str(&s, 100);
    EXPECT_EQ(st.code(), StatusCode::kCorrupt) << "n=" << n;
    EXPECT_EQ(st.message().rfind("wire: ", 0), 0u) << st.message();
  }
  WireReader r(d);
  uint32_t v;
  std::string s = "unchanged";
  ASSERT_TRUE(r.u32(&v).is_ok());
  const size_t before = r.remaining();
  EXPECT_EQ(r.str(&s, 5).code(), StatusCode::kCorrupt);  // over the limit
  EXPECT_EQ(s, "unchanged");
  EXPECT_EQ(r.remaining(), before);  // a failed read consumes nothing
  ASSERT_TRUE(r.str(&s, 6).is_ok());
  EXPECT_TRUE(r.expect_end().is_ok());

  WireReader extra(d);
  ASSERT_TRUE(extra.u32(&v).is_ok());
  EXPECT_EQ(extra.expect_end().code(), StatusCode::kCorrupt);
}

TEST(Wire, HugeLengthsDoNotAllocate) {
  WireWriter w;
  w.u64(std::numeric_limits<uint64_t>::max());
  std::vector<uint8_t> out;
  WireReader r(w.data());
  EXPECT_EQ(r.bytes(&out, std::numeric_limits<size_t>::max()).code(), StatusCode::kCorrupt);
  EXPECT_TRUE(out.empty());
  WireWriter w2;
  w2.u32(0xFFFFFFFFu);
  std::string s;
  WireReader r2(w2.data());
  EXPECT_EQ(r2.str(&s, std::numeric_limits<size_t>::max()).code(), StatusCode::kCorrupt);
}

// Random bytes through a fixed message schema: every read either succeeds within bounds or
// returns kCorrupt; nothing crashes (ASan run checks the bounds).
TEST(Wire, SeededFuzzNeverReadsOutOfBounds) {
  std::mt19937_64 rng(20240601);
  int corrupt = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> buf(rng() % 64);
    for (auto& b : buf) b = static_cast<uint8_t>(rng());
    // Sometimes make lengths small so the string paths succeed too.
    if (buf.size() > 8 && (iter & 1)) buf[4] = buf[5] = buf[6] = 0, buf[7] = 0;
    WireReader r(buf.data(), buf.size());
    uint32_t a;
    std::string s;
    std::vector<uint8_t> bytes;
    uint64_t c;
    Status st = r.u32(&a);
    if (st.is_ok()) st = r.str(&s, 32);
    if (st.is_ok()) st = r.bytes(&bytes, 32);
    if (st.is_ok()) st = r.u64(&c);
    if (st.is_ok()) st = r.expect_end();
    if (!st.is_ok()) {
      EXPECT_EQ(st.code(), StatusCode::kCorrupt);
      ++corrupt;
    }
    EXPECT_LE(s.size(), 32u);
    EXPECT_LE(bytes.size(), 32u);
  }
  EXPECT_GT(corrupt, 0);
}

}  // namespace
}  // namespace cohort::net
