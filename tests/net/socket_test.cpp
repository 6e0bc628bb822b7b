#include "net/socket.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "net_test_util.h"

namespace cohort::net {
namespace {

using testing::connected_pair;
using testing::elapsed_ms;

TEST(Socket, DefaultIsClosed) {
  Socket s;
  EXPECT_FALSE(s.is_open());
  char c;
  EXPECT_EQ(s.read_exact(&c, 1, 0).code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.write_all(&c, 1, 0).code(), StatusCode::kUnavailable);
}

TEST(Socket, Echo) {
  Socket a, b;
  connected_pair(&a, &b);
  EXPECT_TRUE(a.is_open());
  EXPECT_TRUE(a.is_initiator());
  EXPECT_FALSE(b.is_initiator());
  EXPECT_EQ(a.peer(), b.local());
  EXPECT_EQ(a.local(), b.peer());
  EXPECT_EQ(a.peer().rfind("127.0.0.1:", 0), 0u);

  std::thread echo([&b] {
    for (int i = 0; i < 100; ++i) {
      char buf[32];
      ASSERT_TRUE(b.read_exact(buf, sizeof(buf), 5000).is_ok());
      ASSERT_TRUE(b.write_all(buf, sizeof(buf), 5000).is_ok());
    }
  });
  for (int i = 0; i < 100; ++i) {
    char out[32], in[32];
    std::memset(out, 'a' + i % 26, sizeof(out));
    ASSERT_TRUE(a.write_all(out, sizeof(out), 5000).is_ok());
    ASSERT_TRUE(a.read_exact(in, sizeof(in), 5000).is_ok());
    ASSERT_EQ(std::memcmp(in, out, sizeof(in)), 0);
  }
  echo.join();
}

TEST(Socket, LargeTransferBothWaysAtOnce) {
  Socket a, b;
  connected_pair(&a, &b);
  const size_t n = 64u << 20;
  std::vector<uint8_t> out(n), in(n), back_in(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  // b reads and simultaneously echoes in chunks from another thread: exercises a concurrent
  // reader and writer on one socket and full kernel buffers on both sides.
  std::thread peer([&] {
    const size_t chunk = 1u << 20;
    std::vector<uint8_t> buf(chunk);
    for (size_t off = 0; off < n; off += chunk) {
      ASSERT_TRUE(b.read_exact(buf.data(), chunk, 10000).is_ok());
      ASSERT_TRUE(b.write_all(buf.data(), chunk, 10000).is_ok());
    }
  });
  std::thread reader([&] { ASSERT_TRUE(a.read_exact(back_in.data(), n, 20000).is_ok()); });
  const int64_t t0 = now_ns();
  ASSERT_TRUE(a.write_all(out.data(), n, 20000).is_ok());
  reader.join();
  peer.join();
  std::printf("64 MiB echoed in %.1f ms\n", elapsed_ms(t0));
  EXPECT_EQ(std::memcmp(back_in.data(), out.data(), n), 0);
}

TEST(Socket, ReadTimeoutHonoured) {
  Socket a, b;
  connected_pair(&a, &b);
  char buf[4];
  for (int64_t timeout : {0, 50, 200}) {
    const int64_t t0 = now_ns();
    const Status st = a.read_exact(buf, sizeof(buf), timeout);
    const double ms = elapsed_ms(t0);
    EXPECT_EQ(st.code(), StatusCode::kTimeout) << st.message();
    EXPECT_EQ(st.message().rfind("tcp: ", 0), 0u);
    EXPECT_GE(ms, static_cast<double>(timeout) - 1.0);
    EXPECT_LT(ms, static_cast<double>(timeout) + 500.0);
  }
  // A partial message still times out, and says how much arrived.
  ASSERT_TRUE(b.write_all("xy", 2, 1000).is_ok());
  size_t got = 0;
  const Status st = a.read_exact_counted(buf, sizeof(buf), 50, &got);
  EXPECT_EQ(st.code(), StatusCode::kTimeout);
  EXPECT_EQ(got, 2u);
  EXPECT_NE(st.message().find("received 2 of 4"), std::string::npos) << st.message();
}

TEST(Socket, WaitReadable) {
  Socket a, b;
  connected_pair(&a, &b);
  auto r = a.wait_readable(20);
  ASSERT_TRUE(r.is_ok());
  EXPECT_FALSE(*r);
  ASSERT_TRUE(b.write_all("z", 1, 1000).is_ok());
  r = a.wait_readable(1000);
  ASSERT_TRUE(r.is_ok());
  EXPECT_TRUE(*r);
  a.set_busy_poll(true);
  r = a.wait_readable(1000);
  ASSERT_TRUE(r.is_ok());
  EXPECT_TRUE(*r);
}

TEST(Socket, PeerCloseIsUnavailable) {
  Socket a, b;
  connected_pair(&a, &b);
  const std::string peer = a.peer();
  b = Socket();  // closes
  char buf[8];
  const int64_t t0 = now_ns();
  const Status st = a.read_exact(buf, sizeof(buf), 5000);
  EXPECT_LT(elapsed_ms(t0), 1000.0);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.message(), "tcp: peer " + peer + " closed the connection");
  // Writes notice too (possibly after one that the kernel still accepts).
  std::vector<uint8_t> big(1 << 20);
  Status w;
  for (int i = 0; i < 16 && w.is_ok(); ++i) w = a.write_all(big.data(), big.size(), 2000);
  EXPECT_EQ(w.code(), StatusCode::kUnavailable) << w.message();
}

TEST(Socket, BusyPollReadsWork) {
  Socket a, b;
  connected_pair(&a, &b);
  a.set_busy_poll(true);
  std::thread t([&b] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(b.write_all("ping", 4, 1000).is_ok());
  });
  char buf[4];
  ASSERT_TRUE(a.read_exact(buf, 4, 2000).is_ok());
  EXPECT_EQ(std::memcmp(buf, "ping", 4), 0);
  t.join();
  const int64_t t0 = now_ns();
  EXPECT_EQ(a.read_exact(buf, 4, 30).code(), StatusCode::kTimeout);
  EXPECT_GE(elapsed_ms(t0), 29.0);
}

TEST(Socket, ConnectToClosedPortFailsFast) {
  uint16_t port;
  {
    auto l = Listener::bind({"127.0.0.1", 0});
    ASSERT_TRUE(l.is_ok());
    port = l->port();
  }
  const int64_t t0 = now_ns();
  auto s = Socket::connect({"127.0.0.1", port}, 5000);
  EXPECT_LT(elapsed_ms(t0), 1000.0);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(s.status().message().find(std::to_string(port)), std::string::npos);
}

TEST(Socket, ConnectResolvesNames) {
  auto l = Listener::bind({"127.0.0.1", 0});
  ASSERT_TRUE(l.is_ok());
  auto s = Socket::connect({"localhost", l->port()}, 5000);  // may try ::1 first
  ASSERT_TRUE(s.is_ok()) << s.status().message();
}

TEST(Listener, AcceptTimeoutAndClose) {
  auto l = Listener::bind({"127.0.0.1", 0});
  ASSERT_TRUE(l.is_ok()) << l.status().message();
  EXPECT_NE(l->port(), 0);
  int64_t t0 = now_ns();
  auto s = l->accept(100);
  EXPECT_EQ(s.status().code(), StatusCode::kTimeout);
  EXPECT_GE(elapsed_ms(t0), 99.0);
  EXPECT_LT(elapsed_ms(t0), 600.0);

  // close() from another thread wakes a blocked accept().
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    l->close();
  });
  t0 = now_ns();
  s = l->accept(5000);
  closer.join();
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable) << s.status().message();
  EXPECT_LT(elapsed_ms(t0), 2000.0);
  auto c = Socket::connect({"127.0.0.1", l->port()}, 1000);
  EXPECT_FALSE(c.is_ok());
}

TEST(Listener, BindTakenPortFails) {
  auto l = Listener::bind({"127.0.0.1", 0});
  ASSERT_TRUE(l.is_ok());
  auto l2 = Listener::bind({"127.0.0.1", l->port()});
  ASSERT_FALSE(l2.is_ok());
  EXPECT_EQ(l2.status().message().rfind("tcp: ", 0), 0u);
}

TEST(Socket, ShutdownWakesBlockedReader) {
  Socket a, b;
  connected_pair(&a, &b);
  std::atomic<bool> done{false};
  Status st;
  std::thread reader([&] {
    char buf[16];
    st = a.read_exact(buf, sizeof(buf), 10000);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(done.load());
  const int64_t t0 = now_ns();
  a.shutdown();
  reader.join();
  EXPECT_LT(elapsed_ms(t0), 1000.0);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.message();
  EXPECT_FALSE(a.is_open());
  char c;
  EXPECT_EQ(a.write_all(&c, 1, 100).code(), StatusCode::kUnavailable);
  // The peer sees the close.
  EXPECT_EQ(b.read_exact(&c, 1, 1000).code(), StatusCode::kUnavailable);
}

TEST(Socket, MoveKeepsTheConnection) {
  Socket a, b;
  connected_pair(&a, &b);
  Socket moved(std::move(a));
  EXPECT_TRUE(moved.is_open());
  Socket assigned;
  assigned = std::move(moved);
  ASSERT_TRUE(assigned.write_all("k", 1, 1000).is_ok());
  char c = 0;
  ASSERT_TRUE(b.read_exact(&c, 1, 1000).is_ok());
  EXPECT_EQ(c, 'k');
}

}  // namespace
}  // namespace cohort::net
