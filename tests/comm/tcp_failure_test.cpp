// tcp: a rank that never joins, a peer that goes away, a wrong cluster key and a peer that
// sends garbage all end in a prompt, clear error; never a hang or a crash.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "comm/collectives.h"
#include "comm_harness.h"
#include "net/frame.h"
#include "net/handshake.h"
#include "net/secure_channel.h"
#include "net/socket.h"

namespace cohort::comm {
namespace {

using testing::make_tcp_group;
using testing::ms_since;
using testing::run_ranks;
using testing::tcp_listen;
using testing::test_key;
using Clock = std::chrono::steady_clock;

TEST(TcpMesh, RankThatNeverJoinsTimesOut) {
  auto setup = tcp_listen(3);
  ASSERT_TRUE(setup.is_ok()) << setup.status().message();
  TcpOptions opts;
  opts.key = test_key();
  opts.connect_timeout_ms = 500;
  const auto start = Clock::now();
  std::vector<Status> st = run_ranks(2, [&](int r) -> Status {  // rank 2 never comes
    auto c = std::move(setup->listeners[static_cast<size_t>(r)]).connect(r, setup->endpoints, opts);
    return c.status();
  });
  const int64_t elapsed = ms_since(start);
  for (const Status& s : st) {
    EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.message();
    EXPECT_NE(s.message().find("rank(s) 2"), std::string::npos) << s.message();
    EXPECT_EQ(s.message().rfind("tcp: ", 0), 0u) << s.message();
  }
  EXPECT_LT(elapsed, 1000);
}

TEST(TcpMesh, LowerRankThatNeverAnswersTimesOut) {
  auto setup = tcp_listen(2);
  ASSERT_TRUE(setup.is_ok());
  TcpOptions opts;
  opts.key = test_key();
  opts.connect_timeout_ms = 400;
  const auto start = Clock::now();
  // Rank 0's port accepts TCP connections (backlog) but nobody runs its side.
  auto c = std::move(setup->listeners[1]).connect(1, setup->endpoints, opts);
  EXPECT_EQ(c.status().code(), StatusCode::kTimeout) << c.status().message();
  EXPECT_LT(ms_since(start), 800);
}

TEST(TcpMesh, WrongClusterKeyFailsOnBothSides) {
  auto setup = tcp_listen(2);
  ASSERT_TRUE(setup.is_ok());
  std::vector<int64_t> elapsed(2);
  const auto start = Clock::now();
  std::vector<Status> st = run_ranks(2, [&](int r) -> Status {
    TcpOptions opts;
    opts.key = test_key();
    if (r == 1) opts.key.bytes[0] ^= 1;
    opts.connect_timeout_ms = 1500;
    auto c = std::move(setup->listeners[static_cast<size_t>(r)]).connect(r, setup->endpoints, opts);
    elapsed[static_cast<size_t>(r)] = ms_since(start);
    return c.status();
  });
  // The connecting side learns at once that the handshake failed.
  EXPECT_FALSE(st[1].is_ok());
  EXPECT_NE(st[1].message().find("handshake with rank 0"), std::string::npos) << st[1].message();
  EXPECT_LT(elapsed[1], 1000);
  // The accepting side refuses the stranger, waits for its real peer, and says why it failed.
  EXPECT_EQ(st[0].code(), StatusCode::kTimeout) << st[0].message();
  EXPECT_NE(st[0].message().find("refused"), std::string::npos) << st[0].message();
  EXPECT_NE(st[0].message().find("cluster key"), std::string::npos) << st[0].message();
}

TEST(TcpMesh, MismatchedEncryptionIsRefusedOnBothSides) {
  auto setup = tcp_listen(2);
  ASSERT_TRUE(setup.is_ok());
  std::vector<Status> st = run_ranks(2, [&](int r) -> Status {
    TcpOptions opts;
    opts.key = test_key();
    opts.key.encrypt_traffic = r == 0;
    opts.connect_timeout_ms = 1000;
    auto c = std::move(setup->listeners[static_cast<size_t>(r)]).connect(r, setup->endpoints, opts);
    return c.status();
  });
  // The connecting rank fails at once, the accepting one refuses it and says why.
  EXPECT_EQ(st[1].code(), StatusCode::kUnsupported) << st[1].message();
  EXPECT_NE(st[1].message().find("--encrypt"), std::string::npos) << st[1].message();
  EXPECT_EQ(st[0].code(), StatusCode::kTimeout) << st[0].message();
  EXPECT_NE(st[0].message().find("--encrypt"), std::string::npos) << st[0].message();
}

TEST(TcpMesh, StrangerIsRefusedAndTheMeshStillForms) {
  auto setup = tcp_listen(2);
  ASSERT_TRUE(setup.is_ok());
  auto stranger = net::Socket::connect(setup->endpoints[0], 1000);
  ASSERT_TRUE(stranger.is_ok());
  const char junk[] = "GET / HTTP/1.1\r\n\r\n";
  ASSERT_TRUE(stranger->write_all(junk, sizeof(junk), 1000).is_ok());
  stranger->shutdown();
  TcpOptions opts;
  opts.key = test_key();
  opts.connect_timeout_ms = 5000;
  std::vector<std::unique_ptr<Communicator>> group(2);
  std::vector<Status> st = run_ranks(2, [&](int r) -> Status {
    auto c = std::move(setup->listeners[static_cast<size_t>(r)]).connect(r, setup->endpoints, opts);
    if (!c.is_ok()) return c.status();
    float x = 1.0f + static_cast<float>(r);
    Status s = c.value()->all_reduce_sum(&x, 1, 5000);
    if (s.is_ok() && x != 3.0f) s = Status::internal("sum " + std::to_string(x));
    return s;
  });
  for (const Status& s : st) EXPECT_TRUE(s.is_ok()) << s.message();
}

TEST(TcpComm, RecvTimeoutLeavesTheLinkUsable) {
  auto g = make_tcp_group(2);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto& group = g.value();
  float x = 0;
  const auto start = Clock::now();
  const Status st = group[0]->recv(1, &x, sizeof(x), 200);
  EXPECT_EQ(st.code(), StatusCode::kTimeout) << st.message();
  EXPECT_GE(ms_since(start), 190);
  EXPECT_LT(ms_since(start), 400);
  const float y = 42;
  ASSERT_TRUE(group[1]->send(0, &y, sizeof(y), 1000).is_ok());
  ASSERT_TRUE(group[0]->recv(1, &x, sizeof(x), 1000).is_ok());
  EXPECT_EQ(x, 42);
}

TEST(TcpComm, ClosedPeerIsUnavailableQuickly) {
  for (int n : {2, 3}) {
    auto g = make_tcp_group(n);
    ASSERT_TRUE(g.is_ok()) << g.status().message();
    auto& group = g.value();
    group[static_cast<size_t>(n - 1)].reset();  // the last rank goes away
    const auto start = Clock::now();
    std::vector<Status> st = run_ranks(n - 1, [&](int r) {
      std::vector<float> v(1000, 1.0f);
      return group[static_cast<size_t>(r)]->all_reduce_sum(v.data(), v.size(), 10000);
    });
    for (const Status& s : st) {
      EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.message();
      EXPECT_EQ(s.message().rfind("tcp: rank ", 0), 0u) << s.message();
    }
    EXPECT_LT(ms_since(start), 2000);
    float x = 0;
    EXPECT_EQ(group[0]->recv(n - 1, &x, sizeof(x), 10000).code(), StatusCode::kUnavailable);
  }
}

// Rank 0 of a two-rank communicator whose rank 1 is a raw socket the test drives. sealed:
// both ends of the link are sealed by a real handshake first (--encrypt).
struct RawPeer {
  std::unique_ptr<Communicator> comm;
  net::Socket raw;
};

RawPeer raw_peer(bool sealed = false) {
  auto l = net::Listener::bind({"127.0.0.1", 0});
  COHORT_CHECK(l.is_ok());
  auto raw = net::Socket::connect({"127.0.0.1", l->port()}, 1000);
  COHORT_CHECK(raw.is_ok());
  auto mine = l->accept(1000);
  COHORT_CHECK(mine.is_ok());
  if (sealed) {
    net::ClusterKey key = test_key();
    key.encrypt_traffic = true;
    net::PeerInfo me;
    me.name = "raw";
    me.role = "mesh";
    std::thread t([&] { COHORT_CHECK(net::handshake(*raw, key, me, 3000).is_ok()); });
    COHORT_CHECK(net::handshake(*mine, key, me, 3000).is_ok());
    t.join();
  }
  std::vector<std::unique_ptr<net::Socket>> peers(2);
  peers[1] = std::make_unique<net::Socket>(std::move(mine).value());
  return {make_tcp_communicator(0, std::move(peers), false), std::move(raw).value()};
}

TEST(TcpComm, SealedLinkRefusesATamperedMessage) {
  RawPeer p = raw_peer(/*sealed=*/true);
  const float good[4] = {1, 2, 3, 4};
  ASSERT_TRUE(net::write_frame(p.raw, kFrameTypeMeshData, good, sizeof(good), 1000).is_ok());
  float got[4] = {};
  ASSERT_TRUE(p.comm->recv(1, got, sizeof(got), 1000).is_ok());
  EXPECT_EQ(got[3], 4.0f);
  // The same kind of message with one ciphertext bit flipped on the way.
  constexpr size_t c_bytes = sizeof(good) + net::kSealBytes;
  uint8_t frame[net::kFrameHeaderBytes + c_bytes];
  net::encode_frame_header(frame, kFrameTypeMeshData, 0, static_cast<uint32_t>(c_bytes));
  const uint8_t* c = p.raw.channel()->seal(frame, net::kFrameHeaderBytes, good, sizeof(good));
  std::memcpy(frame + net::kFrameHeaderBytes, c, c_bytes);
  frame[net::kFrameHeaderBytes + 5] ^= 0x80;
  ASSERT_TRUE(p.raw.write_all(frame, sizeof(frame), 1000).is_ok());
  const Status st = p.comm->recv(1, got, sizeof(got), 1000);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt) << st.message();
  EXPECT_EQ(p.comm->recv(1, got, sizeof(got), 100).code(), StatusCode::kUnavailable);
}

TEST(TcpComm, GarbageFramesAreCorruptNotACrash) {
  struct Case {
    const char* what;
    std::function<void(net::Socket&)> send;
    StatusCode want;
  };
  const std::vector<Case> cases = {
      {"bad magic",
       [](net::Socket& s) {
         const char junk[] = "this is not a frame at all";
         (void)s.write_all(junk, sizeof(junk), 1000);
       },
       StatusCode::kCorrupt},
      {"wrong type",
       [](net::Socket& s) {
         float v[4] = {};
         (void)net::write_frame(s, 0x0777, v, sizeof(v), 1000);
       },
       StatusCode::kCorrupt},
      {"wrong length",
       [](net::Socket& s) {
         float v[3] = {};
         (void)net::write_frame(s, kFrameTypeMeshData, v, sizeof(v), 1000);
       },
       StatusCode::kCorrupt},
      {"huge length, then silence",
       [](net::Socket& s) {
         uint8_t h[net::kFrameHeaderBytes];
         net::encode_frame_header(h, kFrameTypeMeshData, 0, 1u << 30);
         (void)s.write_all(h, sizeof(h), 1000);
       },
       StatusCode::kCorrupt},
      {"half a frame, then close",
       [](net::Socket& s) {
         uint8_t h[net::kFrameHeaderBytes];
         net::encode_frame_header(h, kFrameTypeMeshData, 0, 16);
         (void)s.write_all(h, sizeof(h), 1000);
         (void)s.write_all(h, 4, 1000);
         s.shutdown();
       },
       StatusCode::kUnavailable},
  };
  for (const Case& c : cases) {
    RawPeer p = raw_peer();
    c.send(p.raw);
    float v[4] = {1, 2, 3, 4};
    const auto start = Clock::now();
    const Status st = p.comm->all_reduce_sum(v, 4, 5000);
    EXPECT_EQ(st.code(), c.want) << c.what << ": " << st.message();
    EXPECT_EQ(st.message().rfind("tcp: rank 0", 0), 0u) << st.message();
    EXPECT_LT(ms_since(start), 2000) << c.what;
    // The link is broken for good.
    EXPECT_EQ(p.comm->recv(1, v, sizeof(v), 100).code(), StatusCode::kUnavailable) << c.what;
  }
}

}  // namespace
}  // namespace cohort::comm
