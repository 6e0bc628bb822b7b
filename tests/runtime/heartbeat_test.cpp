// Failure detection pieces over real loopback connections: heartbeats keep a worker heard; a
// worker that stops beating is declared lost after the silence, one whose connection closes
// at once, one that sends anything else too; and breaking a port's links wakes a receiver
// blocked on one of them while other connections keep working.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "cluster/protocol.h"
#include "core/clock.h"
#include "net/frame.h"
#include "net/net_test_util.h"
#include "runtime/heartbeat_monitor.h"
#include "runtime/heartbeat_sender.h"
#include "runtime/link_breaker.h"

namespace cohort::runtime {
namespace {

using net::testing::connected_pair;
using net::testing::elapsed_ms;

constexpr int64_t kIntervalMs = 50;
constexpr int64_t kSilenceMs = 400;

// Waits up to limit_ms for the monitor to declare a loss; the time it took.
double wait_for_loss(const HeartbeatMonitor& m, int64_t limit_ms) {
  const int64_t t0 = now_ns();
  while (m.lost().empty() && elapsed_ms(t0) < limit_ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return elapsed_ms(t0);
}

struct Watch {
  std::atomic<int> losses{0};
  std::atomic<int> beats{0};
  std::unique_ptr<HeartbeatMonitor> start(net::Socket* control) {
    return std::make_unique<HeartbeatMonitor>(
        std::vector<HeartbeatMonitor::Peer>{{"w1", control}}, kSilenceMs,
        [this](const std::string&) { ++losses; },
        [this](size_t peer, const std::vector<uint8_t>& payload) {
          EXPECT_EQ(peer, 0u);
          EXPECT_EQ(payload.size(), 3u);
          ++beats;
        });
  }
};

TEST(Heartbeat, BeatsKeepAWorkerHeardAndSilenceLosesIt) {
  net::Socket worker, head;
  connected_pair(&worker, &head);
  Watch watch;
  auto monitor = watch.start(&head);
  auto sender = std::make_unique<HeartbeatSender>(worker, kIntervalMs, "w1", [] {
    return std::vector<uint8_t>{1, 2, 3};
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(3 * kSilenceMs));
  EXPECT_EQ(monitor->lost(), "");
  EXPECT_GE(watch.beats.load(), 10);

  sender.reset();  // the worker froze, or its link was cut: the connection stays open
  const double took = wait_for_loss(*monitor, 5000);
  EXPECT_NE(monitor->lost().find("w1: no heartbeat for"), std::string::npos) << monitor->lost();
  EXPECT_GE(took, kSilenceMs - kIntervalMs - 10);
  EXPECT_LT(took, kSilenceMs + 300);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(watch.losses.load(), 1);
}

TEST(Heartbeat, AClosedConnectionIsLostAtOnce) {
  auto worker = std::make_unique<net::Socket>();
  net::Socket head;
  connected_pair(worker.get(), &head);
  Watch watch;
  auto monitor = watch.start(&head);
  worker.reset();  // the worker process died: its kernel closes the connection
  const double took = wait_for_loss(*monitor, 5000);
  EXPECT_NE(monitor->lost().find("w1: control connection failed"), std::string::npos)
      << monitor->lost();
  EXPECT_LT(took, kSilenceMs / 2);
}

TEST(Heartbeat, AnyOtherMessageWhileServingIsALoss) {
  net::Socket worker, head;
  connected_pair(&worker, &head);
  Watch watch;
  auto monitor = watch.start(&head);
  ASSERT_TRUE(net::write_frame(worker, cluster::kMsgPong, nullptr, 0, 1000).is_ok());
  wait_for_loss(*monitor, 5000);
  EXPECT_NE(monitor->lost().find("w1 sent control message 4"), std::string::npos)
      << monitor->lost();
}

TEST(LinkBreaker, WakesABlockedReceiverAndSparesOtherPorts) {
  net::Socket a, b, c, d;
  connected_pair(&a, &b);
  connected_pair(&c, &d);
  const std::string local = b.local();
  const auto port = static_cast<uint16_t>(std::stoi(local.substr(local.rfind(':') + 1)));
  Status got;
  int64_t woke_ns = 0;
  std::thread blocked([&] {
    char byte;
    got = b.read_exact(&byte, 1, 10'000);
    woke_ns = now_ns();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const int64_t broke_ns = now_ns();
  EXPECT_EQ(shutdown_connections_on_port(port), 1);
  blocked.join();
  EXPECT_EQ(got.code(), StatusCode::kUnavailable) << got.message();
  EXPECT_LT(static_cast<double>(woke_ns - broke_ns) / 1e6, 1000.0);

  const char ping = 'x';
  char pong = 0;
  ASSERT_TRUE(c.write_all(&ping, 1, 1000).is_ok());
  ASSERT_TRUE(d.read_exact(&pong, 1, 1000).is_ok());
  EXPECT_EQ(pong, 'x');
}

}  // namespace
}  // namespace cohort::runtime
