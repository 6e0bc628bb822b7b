// The sealing state on its own: key derivation and secretstream messages, no sockets.
#include "net/secure_channel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace cohort::net {
namespace {

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

// Both ends' keys for one simulated connection.
struct Ends {
  SessionKeys initiator;
  SessionKeys responder;
};

Ends derive_both(const ClusterKey& key, const std::vector<uint8_t>& hello_i,
                 const std::vector<uint8_t>& hello_r) {
  const KxKeyPair kx_i = KxKeyPair::generate();
  const KxKeyPair kx_r = KxKeyPair::generate();
  auto i = derive_session_keys(key, true, kx_i, kx_r.public_key, hello_i.data(), hello_i.size(),
                               hello_r.data(), hello_r.size());
  auto r = derive_session_keys(key, false, kx_r, kx_i.public_key, hello_r.data(), hello_r.size(),
                               hello_i.data(), hello_i.size());
  EXPECT_TRUE(i.is_ok() && r.is_ok());
  return {std::move(i).value(), std::move(r).value()};
}

// A sender/receiver pair of channels for one direction (initiator -> responder).
struct Pipe {
  std::unique_ptr<SecureChannel> tx;
  std::unique_ptr<SecureChannel> rx;
};

Pipe make_pipe(const Ends& e) {
  StreamHeader h_i, h_r;
  Pipe p{SecureChannel::start(e.initiator, &h_i), SecureChannel::start(e.responder, &h_r)};
  EXPECT_TRUE(p.rx->accept_peer_header(h_i).is_ok());
  EXPECT_TRUE(p.tx->accept_peer_header(h_r).is_ok());
  return p;
}

const uint8_t kAd[4] = {1, 2, 3, 4};

std::vector<uint8_t> seal(SecureChannel& c, const std::string& m) {
  const uint8_t* out = c.seal(kAd, sizeof(kAd), m.data(), m.size());
  return {out, out + m.size() + kSealBytes};
}

Status open(SecureChannel& c, const std::vector<uint8_t>& ct, std::string* m) {
  m->assign(ct.size() - kSealBytes, '\0');
  return c.open(kAd, sizeof(kAd), ct.data(), ct.size(), m->data());
}

TEST(SessionKeys, BothEndsAgreePerDirectionAndDifferPerConnection) {
  const ClusterKey key = generate_cluster_key();
  const Ends a = derive_both(key, bytes_of("hello-i"), bytes_of("hello-r"));
  EXPECT_EQ(a.initiator.send, a.responder.recv);
  EXPECT_EQ(a.initiator.recv, a.responder.send);
  EXPECT_NE(a.initiator.send, a.initiator.recv);
  // Same key and HELLOs, fresh ephemeral keys: a new connection gets new keys.
  const Ends b = derive_both(key, bytes_of("hello-i"), bytes_of("hello-r"));
  EXPECT_NE(a.initiator.send, b.initiator.send);
}

TEST(SessionKeys, DependOnClusterKeyAndTranscript) {
  const ClusterKey key = generate_cluster_key();
  const ClusterKey other = generate_cluster_key();
  const KxKeyPair kx_i = KxKeyPair::generate();
  const KxKeyPair kx_r = KxKeyPair::generate();
  const auto hi = bytes_of("I"), hr = bytes_of("R"), hx = bytes_of("X");
  auto derive = [&](const ClusterKey& k, const std::vector<uint8_t>& own) {
    auto r = derive_session_keys(k, true, kx_i, kx_r.public_key, own.data(), own.size(), hr.data(),
                                 hr.size());
    EXPECT_TRUE(r.is_ok());
    return std::move(r).value().send;
  };
  const SessionKey base = derive(key, hi);
  EXPECT_EQ(derive(key, hi), base);
  EXPECT_NE(derive(other, hi), base);  // a peer without the key cannot compute it
  EXPECT_NE(derive(key, hx), base);    // another HELLO (nonce, flags, public key)
}

TEST(SessionKeys, LowOrderPublicKeyIsRefused) {
  const ClusterKey key = generate_cluster_key();
  const KxKeyPair own = KxKeyPair::generate();
  const KxPublicKey zero{};  // the identity point: the shared secret would be all zeros
  const auto h = bytes_of("h");
  auto r = derive_session_keys(key, true, own, zero, h.data(), h.size(), h.data(), h.size());
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
}

TEST(SecureChannel, RoundTripHidesThePlaintext) {
  const Ends e = derive_both(generate_cluster_key(), bytes_of("a"), bytes_of("b"));
  Pipe p = make_pipe(e);
  const std::string secret = "the quick brown fox jumps over the lazy dog";
  for (const std::string& m : {secret, std::string(), std::string(100000, 'x')}) {
    const std::vector<uint8_t> ct = seal(*p.tx, m);
    ASSERT_EQ(ct.size(), m.size() + kSealBytes);
    if (!m.empty()) {
      EXPECT_EQ(std::search(ct.begin(), ct.end(), m.begin(), m.begin() + 16), ct.end());
    }
    std::string back;
    ASSERT_TRUE(open(*p.rx, ct, &back).is_ok());
    EXPECT_EQ(back, m);
  }
}

TEST(SecureChannel, FlippedBitFailsAndSpendsTheStream) {
  const Ends e = derive_both(generate_cluster_key(), bytes_of("a"), bytes_of("b"));
  Pipe p = make_pipe(e);
  std::vector<uint8_t> ct = seal(*p.tx, "payload");
  const std::vector<uint8_t> next = seal(*p.tx, "next");
  ct[3] ^= 0x10;
  std::string m;
  const Status st = open(*p.rx, ct, &m);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt) << st.message();
  EXPECT_EQ(m, std::string(m.size(), '\0'));  // nothing unauthenticated is handed out
  // Even a genuine message is refused afterwards: the stream cannot be trusted.
  EXPECT_EQ(open(*p.rx, next, &m).code(), StatusCode::kCorrupt);
}

TEST(SecureChannel, DroppedReorderedAndReplayedMessagesFail) {
  const ClusterKey key = generate_cluster_key();
  {  // dropped (or reordered): the second message arrives first
    Pipe p = make_pipe(derive_both(key, bytes_of("a"), bytes_of("b")));
    (void)seal(*p.tx, "one");
    const auto two = seal(*p.tx, "two");
    std::string m;
    EXPECT_EQ(open(*p.rx, two, &m).code(), StatusCode::kCorrupt);
  }
  {  // replayed: the same message twice
    Pipe p = make_pipe(derive_both(key, bytes_of("a"), bytes_of("b")));
    const auto one = seal(*p.tx, "one");
    std::string m;
    ASSERT_TRUE(open(*p.rx, one, &m).is_ok());
    EXPECT_EQ(open(*p.rx, one, &m).code(), StatusCode::kCorrupt);
  }
  {  // replayed into another connection under the same cluster key
    Pipe old_conn = make_pipe(derive_both(key, bytes_of("a"), bytes_of("b")));
    Pipe new_conn = make_pipe(derive_both(key, bytes_of("a"), bytes_of("b")));
    const auto recorded = seal(*old_conn.tx, "one");
    std::string m;
    EXPECT_EQ(open(*new_conn.rx, recorded, &m).code(), StatusCode::kCorrupt);
  }
}

TEST(SecureChannel, AdditionalDataIsAuthenticated) {
  Pipe p = make_pipe(derive_both(generate_cluster_key(), bytes_of("a"), bytes_of("b")));
  const std::string m = "abc";
  const uint8_t* out = p.tx->seal(kAd, sizeof(kAd), m.data(), m.size());
  const std::vector<uint8_t> ct(out, out + m.size() + kSealBytes);
  const uint8_t other_ad[4] = {1, 2, 3, 5};
  std::string back(m.size(), '\0');
  EXPECT_EQ(p.rx->open(other_ad, sizeof(other_ad), ct.data(), ct.size(), back.data()).code(),
            StatusCode::kCorrupt);
}

TEST(SecureChannel, ShortCiphertextIsRefused) {
  Pipe p = make_pipe(derive_both(generate_cluster_key(), bytes_of("a"), bytes_of("b")));
  const uint8_t tiny[kSealBytes - 1] = {};
  EXPECT_EQ(p.rx->open(kAd, sizeof(kAd), tiny, sizeof(tiny), nullptr).code(), StatusCode::kCorrupt);
}

}  // namespace
}  // namespace cohort::net
