#include "net/discovery.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "core/clock.h"

namespace cohort::net {
namespace {

// A group and port of our own, so concurrent test binaries and real workers on the default
// group do not interfere.
HostPort test_group() {
  return HostPort{"239.255.77.78", static_cast<uint16_t>(40000 + ::getpid() % 20000)};
}

TEST(Discovery, AnnouncementCoding) {
  Announcement a{"w1", "worker", {"10.0.0.5", 7000}, 123456789, kProtocolVersion};
  const auto bytes = encode_announcement(a);
  auto back = decode_announcement(bytes.data(), bytes.size());
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->name, "w1");
  EXPECT_EQ(back->role, "worker");
  EXPECT_EQ(back->control, (HostPort{"10.0.0.5", 7000}));
  EXPECT_EQ(back->free_memory_bytes, 123456789u);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(decode_announcement(bytes.data(), n).is_ok()) << n;
  }
  auto bad_host = encode_announcement({"w", "worker", {"a b", 1}, 0, kProtocolVersion});
  EXPECT_FALSE(decode_announcement(bad_host.data(), bad_host.size()).is_ok());
  auto no_port = encode_announcement({"w", "worker", {"10.0.0.1", 0}, 0, kProtocolVersion});
  EXPECT_FALSE(decode_announcement(no_port.data(), no_port.size()).is_ok());
}

TEST(Discovery, RejectsBadGroups) {
  EXPECT_FALSE(discover({"10.0.0.1", 5000}, 10).is_ok());
  EXPECT_FALSE(discover({"ff02::1", 5000}, 10).is_ok());
  EXPECT_FALSE(discover({"not-an-ip", 5000}, 10).is_ok());
  EXPECT_FALSE(Announcer::start({"w", "worker", {"1.2.3.4", 1}}, {"239.1.1.1", 1}, 0).is_ok());
}

// Runs an announcer and a listener in this process. On the default interface the kernel
// loops the datagram back (IP_MULTICAST_LOOP); on 127.0.0.1 it goes through lo.
void find_each_other(const std::string& interface_ip) {
  const HostPort group = test_group();
  Announcement a{"disc-test-" + std::to_string(::getpid()),
                 "worker",
                 {"0.0.0.0", 6123},
                 42u << 20,
                 kProtocolVersion};
  auto ann = Announcer::start(a, group, 50, interface_ip);
  if (!ann.is_ok()) GTEST_SKIP() << "multicast send unavailable here: " << ann.status().message();
  Announcement b = a;
  b.name += "-b";
  b.control = {"127.0.0.1", 6124};
  auto ann_b = Announcer::start(b, group, 50, interface_ip);
  ASSERT_TRUE(ann_b.is_ok()) << ann_b.status().message();
  const int64_t t0 = now_ns();
  auto heard = discover(group, 400, interface_ip);
  if (!heard.is_ok())
    GTEST_SKIP() << "multicast join unavailable here: " << heard.status().message();
  const double ms = static_cast<double>(now_ns() - t0) / 1e6;
  EXPECT_GE(ms, 399.0);
  EXPECT_LT(ms, 1500.0);
  std::vector<Announcement> ours;
  for (const auto& h : *heard) {
    if (h.name.rfind(a.name, 0) == 0) ours.push_back(h);
  }
  ASSERT_EQ(ours.size(), 2u) << "heard " << heard->size() << " announcements, " << ours.size()
                             << " of ours, on interface '" << interface_ip << "'";
  std::sort(ours.begin(), ours.end(),
            [](const Announcement& x, const Announcement& y) { return x.name < y.name; });
  EXPECT_EQ(ours[0].role, "worker");
  EXPECT_EQ(ours[0].free_memory_bytes, 42u << 20);
  // "0.0.0.0" became the sender's address.
  EXPECT_NE(ours[0].control.host, "0.0.0.0");
  EXPECT_FALSE(ours[0].control.host.empty());
  EXPECT_EQ(ours[0].control.port, 6123);
  EXPECT_EQ(ours[1].control, (HostPort{"127.0.0.1", 6124}));

  // update() changes what is sent.
  Announcement b2 = b;
  b2.free_memory_bytes = 7;
  ann_b.value()->update(b2);
  auto again = discover(group, 300, interface_ip);
  ASSERT_TRUE(again.is_ok());
  bool updated = false;
  for (const auto& h : *again) updated |= h.name == b.name && h.free_memory_bytes == 7;
  EXPECT_TRUE(updated);
}

TEST(Discovery, FindEachOtherOnDefaultInterface) { find_each_other(""); }

TEST(Discovery, FindEachOtherOnLoopback) { find_each_other("127.0.0.1"); }

TEST(Discovery, AnnouncerStopsPromptly) {
  auto ann = Announcer::start({"w", "worker", {"127.0.0.1", 1}}, test_group(), 60000, "127.0.0.1");
  if (!ann.is_ok()) GTEST_SKIP() << ann.status().message();
  const int64_t t0 = now_ns();
  ann.value().reset();
  EXPECT_LT(static_cast<double>(now_ns() - t0) / 1e6, 500.0);
}

}  // namespace
}  // namespace cohort::net
