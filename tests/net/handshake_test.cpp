#include "net/handshake.h"

#include <gtest/gtest.h>

#include <sodium.h>

#include <thread>

#include "core/clock.h"
#include "net/frame.h"
#include "net_test_util.h"

namespace cohort::net {
namespace {

using testing::connected_pair;
using testing::elapsed_ms;

PeerInfo info(const std::string& name, const std::string& role, uint64_t caps = 0) {
  PeerInfo p;
  p.name = name;
  p.role = role;
  p.capabilities = caps;
  return p;
}

struct Both {
  Result<PeerInfo> a = Status::internal("unset");
  Result<PeerInfo> b = Status::internal("unset");
};

Both run_both(Socket& a, Socket& b, const ClusterKey& ka, const ClusterKey& kb, const PeerInfo& ia,
              const PeerInfo& ib, int64_t timeout_ms = 3000) {
  Both r;
  std::thread t([&] { r.b = handshake(b, kb, ib, timeout_ms); });
  r.a = handshake(a, ka, ia, timeout_ms);
  t.join();
  return r;
}

TEST(Handshake, SameKeySucceedsBothWays) {
  const ClusterKey key = generate_cluster_key();
  Socket a, b;
  connected_pair(&a, &b);
  Both r = run_both(a, b, key, key, info("head-1", "head", 3), info("worker-7", "worker", 5));
  ASSERT_TRUE(r.a.is_ok()) << r.a.status().message();
  ASSERT_TRUE(r.b.is_ok()) << r.b.status().message();
  EXPECT_EQ(r.a->name, "worker-7");
  EXPECT_EQ(r.a->role, "worker");
  EXPECT_EQ(r.a->capabilities, 5u);
  EXPECT_EQ(r.a->protocol_version, kProtocolVersion);
  EXPECT_EQ(r.b->name, "head-1");
  EXPECT_EQ(r.b->capabilities, 3u);
  // Traffic flows after it.
  ASSERT_TRUE(write_frame(a, 1, "ok", 2, 1000).is_ok());
  auto f = read_frame(b, 16, 1000);
  ASSERT_TRUE(f.is_ok());

  // And with the same role on both ends (two workers talking).
  Socket c, d;
  connected_pair(&c, &d);
  Both r2 = run_both(c, d, key, key, info("w1", "worker"), info("w2", "worker"));
  EXPECT_TRUE(r2.a.is_ok()) << r2.a.status().message();
  EXPECT_TRUE(r2.b.is_ok()) << r2.b.status().message();
}

TEST(Handshake, WrongKeyFailsOnBothSides) {
  Socket a, b;
  connected_pair(&a, &b);
  const std::string a_peer = a.peer();
  const std::string b_peer = b.peer();
  const int64_t t0 = now_ns();
  Both r = run_both(a, b, generate_cluster_key(), generate_cluster_key(), info("h", "head"),
                    info("w", "worker"));
  EXPECT_LT(elapsed_ms(t0), 2000.0);  // fails fast, not by timeout
  ASSERT_FALSE(r.a.is_ok());
  ASSERT_FALSE(r.b.is_ok());
  EXPECT_EQ(r.a.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.b.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.b.status().message(), "auth: peer " + b_peer + " did not prove the cluster key");
  EXPECT_EQ(
      r.a.status().message().rfind("auth: peer " + a_peer + " did not prove the cluster key", 0),
      0u)
      << r.a.status().message();
  EXPECT_FALSE(a.is_open());
  EXPECT_FALSE(b.is_open());
}

TEST(Handshake, VersionMismatchFailsClearly) {
  const ClusterKey key = generate_cluster_key();
  Socket a, b;
  connected_pair(&a, &b);
  PeerInfo future = info("new", "worker");
  future.protocol_version = kProtocolVersion + 1;
  Both r = run_both(a, b, key, key, info("old", "head"), future);
  ASSERT_FALSE(r.a.is_ok());
  ASSERT_FALSE(r.b.is_ok());
  EXPECT_EQ(r.a.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(r.b.status().code(), StatusCode::kUnsupported);
  const std::string v_old = std::to_string(kProtocolVersion);
  const std::string v_new = std::to_string(kProtocolVersion + 1);
  EXPECT_NE(r.a.status().message().find("version " + v_new), std::string::npos)
      << r.a.status().message();
  EXPECT_NE(r.a.status().message().find("version " + v_old), std::string::npos);
  EXPECT_NE(r.b.status().message().find("version " + v_old), std::string::npos)
      << r.b.status().message();
}

// A scripted initiator that knows the key, to tamper with one step at a time.
struct Scripted {
  Socket sock;
  Nonce nonce{};
  std::vector<uint8_t> hello;
  std::vector<uint8_t> peer_hello;
  Nonce peer_nonce{};
};

Scripted scripted_hello(Socket s, const std::vector<uint8_t>* hello_override = nullptr) {
  Scripted sc;
  sc.sock = std::move(s);
  randombytes_buf(sc.nonce.data(), sc.nonce.size());
  sc.hello = hello_override ? *hello_override : encode_hello(info("mallory", "head"), sc.nonce);
  if (hello_override) {
    auto h = decode_hello(sc.hello.data(), sc.hello.size());
    COHORT_CHECK(h.is_ok());
    sc.nonce = h->nonce;
  }
  COHORT_CHECK(
      write_frame(sc.sock, kFrameTypeHello, sc.hello.data(), sc.hello.size(), 1000).is_ok());
  auto f = read_frame(sc.sock, kMaxHelloBytes, 2000);
  COHORT_CHECK(f.is_ok());
  sc.peer_hello = f->payload;
  auto h = decode_hello(sc.peer_hello.data(), sc.peer_hello.size());
  COHORT_CHECK(h.is_ok());
  sc.peer_nonce = h->nonce;
  return sc;
}

TEST(Handshake, TamperedAndReplayedProofsFail) {
  const ClusterKey key = generate_cluster_key();
  Proof recorded{};
  std::vector<uint8_t> recorded_hello;
  {  // An honest scripted run: the responder accepts it, so the script is right.
    Socket a, b;
    connected_pair(&a, &b);
    Result<PeerInfo> rb = Status::internal("unset");
    std::thread t([&] { rb = handshake(b, key, info("w", "worker"), 3000); });
    Scripted sc = scripted_hello(std::move(a));
    recorded = compute_proof(key, true, "head", sc.nonce, sc.peer_nonce, sc.hello, sc.peer_hello);
    recorded_hello = sc.hello;
    ASSERT_TRUE(
        write_frame(sc.sock, kFrameTypeProof, recorded.data(), recorded.size(), 1000).is_ok());
    auto reply = read_frame(sc.sock, kProofBytes, 2000);
    t.join();
    ASSERT_TRUE(rb.is_ok()) << rb.status().message();
    ASSERT_TRUE(reply.is_ok()) << reply.status().message();
    const Proof expect =
        compute_proof(key, false, "worker", sc.peer_nonce, sc.nonce, sc.peer_hello, sc.hello);
    EXPECT_EQ(std::vector<uint8_t>(expect.begin(), expect.end()), reply->payload);
  }
  enum Attack { kFlipBit, kReplay, kReflectSide, kTamperHello, kShortProof };
  for (Attack attack : {kFlipBit, kReplay, kReflectSide, kTamperHello, kShortProof}) {
    SCOPED_TRACE(static_cast<int>(attack));
    Socket a, b;
    connected_pair(&a, &b);
    Result<PeerInfo> rb = Status::internal("unset");
    std::thread t([&] { rb = handshake(b, key, info("w", "worker"), 3000); });
    // kReplay resends the recorded hello (same nonce) and the recorded proof.
    Scripted sc = scripted_hello(std::move(a), attack == kReplay ? &recorded_hello : nullptr);
    Proof p = compute_proof(key, true, "head", sc.nonce, sc.peer_nonce, sc.hello, sc.peer_hello);
    size_t n = p.size();
    switch (attack) {
      case kFlipBit:
        p[17] ^= 0x10;
        break;
      case kReplay:
        p = recorded;
        break;
      case kReflectSide:  // the proof the responder itself would send
        p = compute_proof(key, false, "head", sc.nonce, sc.peer_nonce, sc.hello, sc.peer_hello);
        break;
      case kTamperHello: {  // a proof over a hello other than the one sent
        auto other = encode_hello(info("mallory", "worker"), sc.nonce);
        p = compute_proof(key, true, "head", sc.nonce, sc.peer_nonce, other, sc.peer_hello);
        break;
      }
      case kShortProof:
        n = 31;
        break;
    }
    ASSERT_TRUE(write_frame(sc.sock, kFrameTypeProof, p.data(), n, 1000).is_ok());
    auto reply = read_frame(sc.sock, kProofBytes, 2000);
    t.join();
    ASSERT_FALSE(rb.is_ok());
    EXPECT_EQ(rb.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(rb.status().message().find("did not prove the cluster key"), std::string::npos)
        << rb.status().message();
    // The responder revealed no proof of its own.
    EXPECT_FALSE(reply.is_ok());
  }
}

TEST(Handshake, SilentPeerTimesOut) {
  Socket a, b;
  connected_pair(&a, &b);
  const int64_t t0 = now_ns();
  auto r = handshake(a, generate_cluster_key(), info("h", "head"), 200);
  EXPECT_EQ(r.status().code(), StatusCode::kTimeout) << r.status().message();
  EXPECT_GE(elapsed_ms(t0), 190.0);
  EXPECT_LT(elapsed_ms(t0), 1500.0);
}

TEST(Handshake, GarbagePeerFailsFast) {
  Socket a, b;
  connected_pair(&a, &b);
  const char junk[] = "SSH-2.0-OpenSSH_9.6\r\nlots of other bytes here";
  ASSERT_TRUE(b.write_all(junk, sizeof(junk) - 1, 1000).is_ok());
  const int64_t t0 = now_ns();
  auto r = handshake(a, generate_cluster_key(), info("h", "head"), 3000);
  EXPECT_LT(elapsed_ms(t0), 1000.0);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt) << r.status().message();
  EXPECT_EQ(r.status().message().rfind("handshake: ", 0), 0u);

  // A well-framed but malformed HELLO, and a peer that hangs up, fail too.
  Socket c, d;
  connected_pair(&c, &d);
  // This build's version (little-endian), so the malformed length is what fails.
  const uint8_t bad_hello[] = {
      'C', 'O', 'H', 'H', static_cast<uint8_t>(kProtocolVersion), 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
  static_assert(kProtocolVersion < 256);
  ASSERT_TRUE(write_frame(d, kFrameTypeHello, bad_hello, sizeof(bad_hello), 1000).is_ok());
  r = handshake(c, generate_cluster_key(), info("h", "head"), 3000);
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt) << r.status().message();

  Socket e, f;
  connected_pair(&e, &f);
  f = Socket();
  r = handshake(e, generate_cluster_key(), info("h", "head"), 3000);
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().message();
}

TEST(Handshake, HelloCodingRejectsControlCharacters) {
  Nonce n{};
  auto bytes = encode_hello(info("evil\x1b[2J", "worker"), n);
  EXPECT_EQ(decode_hello(bytes.data(), bytes.size()).status().code(), StatusCode::kCorrupt);
  bytes = encode_hello(info("fine", "worker"), n);
  EXPECT_TRUE(decode_hello(bytes.data(), bytes.size()).is_ok());
  bytes.push_back(0);
  EXPECT_FALSE(decode_hello(bytes.data(), bytes.size()).is_ok());
}

}  // namespace
}  // namespace cohort::net
