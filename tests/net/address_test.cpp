#include "net/address.h"

#include <gtest/gtest.h>

namespace cohort::net {
namespace {

TEST(ParseHostPort, AcceptsIpv4Ipv6AndNames) {
  auto a = parse_host_port("127.0.0.1:5000");
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 5000);
  EXPECT_EQ(a->to_string(), "127.0.0.1:5000");

  auto b = parse_host_port("[::1]:5000");
  ASSERT_TRUE(b.is_ok()) << b.status().message();
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->port, 5000);
  EXPECT_EQ(b->to_string(), "[::1]:5000");

  auto c = parse_host_port("node-3.lan:65535");
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(c->host, "node-3.lan");
  EXPECT_EQ(c->port, 65535);

  auto d = parse_host_port("0.0.0.0:0");
  ASSERT_TRUE(d.is_ok());
  EXPECT_EQ(d->port, 0);
}

TEST(ParseHostPort, RejectsMalformed) {
  for (const char* s : {"", "127.0.0.1", "127.0.0.1:", ":5000", "host:abc", "host:65536",
                        "host:123456", "host:-1", "::1:5000", "[::1]", "[::1]5000", "[::1:5000",
                        "[]:5000", "[host]:5000", "a b:5000", "host:5000 ", "ho\nst:1"}) {
    auto r = parse_host_port(s);
    EXPECT_FALSE(r.is_ok()) << "accepted '" << s << "'";
    if (!r.is_ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << s;
      EXPECT_EQ(r.status().message().rfind("address: ", 0), 0u) << r.status().message();
    }
  }
}

TEST(ParseHostPort, RoundTripsThroughToString) {
  for (const char* s : {"10.0.0.1:1", "[fe80::1]:52416", "localhost:8080"}) {
    auto r = parse_host_port(s);
    ASSERT_TRUE(r.is_ok()) << s;
    EXPECT_EQ(r->to_string(), s);
  }
}

}  // namespace
}  // namespace cohort::net
