// Sealed links end to end over loopback sockets: the handshake with --encrypt on both ends,
// frames through frame.h, and what a tampering peer (or a man in the middle writing raw
// bytes into the stream) gets.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "net/frame.h"
#include "net/handshake.h"
#include "net/secure_channel.h"
#include "net_test_util.h"

namespace cohort::net {
namespace {

using testing::connected_pair;

PeerInfo sealed_info(const std::string& name) {
  PeerInfo p;
  p.name = name;
  p.role = "worker";
  return p;
}

ClusterKey with_sealing(ClusterKey key, bool on) {
  key.encrypt_traffic = on;
  return key;
}

struct SealedBoth {
  Result<PeerInfo> a = Status::internal("unset");
  Result<PeerInfo> b = Status::internal("unset");
};

SealedBoth sealed_run_both(Socket& a, Socket& b, const ClusterKey& ka, const ClusterKey& kb) {
  SealedBoth r;
  std::thread t([&] { r.b = handshake(b, kb, sealed_info("b"), 3000); });
  r.a = handshake(a, ka, sealed_info("a"), 3000);
  t.join();
  return r;
}

// a and b: a sealed connection (a initiated).
void sealed_pair(Socket* a, Socket* b) {
  const ClusterKey key = with_sealing(generate_cluster_key(), true);
  connected_pair(a, b);
  SealedBoth r = sealed_run_both(*a, *b, key, key);
  ASSERT_TRUE(r.a.is_ok()) << r.a.status().message();
  ASSERT_TRUE(r.b.is_ok()) << r.b.status().message();
  ASSERT_NE(a->channel(), nullptr);
  ASSERT_NE(b->channel(), nullptr);
}

// Writes one sealed frame the way write_frame does, but lets the test edit the bytes.
std::vector<uint8_t> sealed_frame_bytes(Socket& s, uint16_t type, const std::string& payload) {
  const size_t c_bytes = payload.size() + kSealBytes;
  std::vector<uint8_t> out(kFrameHeaderBytes + c_bytes);
  encode_frame_header(out.data(), type, 0, static_cast<uint32_t>(c_bytes));
  const uint8_t* c =
      s.channel()->seal(out.data(), kFrameHeaderBytes, payload.data(), payload.size());
  std::memcpy(out.data() + kFrameHeaderBytes, c, c_bytes);
  return out;
}

void send_raw(Socket& s, const std::vector<uint8_t>& bytes) {
  ASSERT_TRUE(s.write_all(bytes.data(), bytes.size(), 1000).is_ok());
}

TEST(SealedLink, FramesRoundTripBothWays) {
  Socket a, b;
  sealed_pair(&a, &b);
  // Empty, small, and larger than the reader's growth chunk (16 MiB).
  for (size_t n : {size_t{0}, size_t{1}, size_t{8192}, size_t{(17u << 20) + 3}}) {
    std::vector<uint8_t> msg(n);
    for (size_t i = 0; i < n; ++i) msg[i] = static_cast<uint8_t>(i * 7 + 1);
    Status sent;
    std::thread t([&] { sent = write_frame(a, 42, msg.data(), msg.size(), 5000, 9); });
    auto f = read_frame(b, n, 5000);
    t.join();
    ASSERT_TRUE(sent.is_ok()) << sent.message();
    ASSERT_TRUE(f.is_ok()) << f.status().message();
    EXPECT_EQ(f->type, 42);
    EXPECT_EQ(f->flags, 9);
    EXPECT_EQ(f->payload, msg);
  }
  ASSERT_TRUE(write_frame(b, 7, "back", 4, 1000).is_ok());
  auto f = read_frame(a, 16, 1000);
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(std::string(f->payload.begin(), f->payload.end()), "back");
}

TEST(SealedLink, TwoStepReadDeliversIntoCallerBuffer) {
  Socket a, b;
  sealed_pair(&a, &b);
  ASSERT_TRUE(write_frame(a, 5, "0123456789", 10, 1000).is_ok());
  size_t got = 0;
  auto h = read_frame_header(b, 10, 1000, &got);
  ASSERT_TRUE(h.is_ok()) << h.status().message();
  EXPECT_EQ(got, kFrameHeaderBytes);
  EXPECT_EQ(h->payload_bytes, 10u);  // the plaintext size, not the ciphertext's
  char buf[10];
  ASSERT_TRUE(read_frame_payload(b, *h, buf, 1000).is_ok());
  EXPECT_EQ(std::string(buf, 10), "0123456789");
}

TEST(SealedLink, FrameLimitAppliesToThePlaintext) {
  Socket a, b;
  sealed_pair(&a, &b);
  ASSERT_TRUE(write_frame(a, 1, "1234567890", 10, 1000).is_ok());
  EXPECT_TRUE(read_frame(b, 10, 1000).is_ok());
  ASSERT_TRUE(write_frame(a, 1, "12345678901", 11, 1000).is_ok());
  auto f = read_frame(b, 10, 1000);
  ASSERT_FALSE(f.is_ok());
  EXPECT_EQ(f.status().code(), StatusCode::kCorrupt) << f.status().message();
  EXPECT_FALSE(b.is_open());  // a sealed link is broken by any bad frame
}

// Each kind of tampering: the reader gets kCorrupt, and the link is shut down (a later read
// is kUnavailable), never a plaintext answer.
void expect_refused_then_closed(Socket& reader) {
  auto f = read_frame(reader, 1024, 2000);
  ASSERT_FALSE(f.is_ok());
  EXPECT_EQ(f.status().code(), StatusCode::kCorrupt) << f.status().message();
  EXPECT_NE(f.status().message().find("authentication"), std::string::npos) << f.status().message();
  auto again = read_frame(reader, 1024, 200);
  ASSERT_FALSE(again.is_ok());
  EXPECT_EQ(again.status().code(), StatusCode::kUnavailable) << again.status().message();
}

TEST(SealedLink, FlippedCiphertextBitIsRefused) {
  Socket a, b;
  sealed_pair(&a, &b);
  std::vector<uint8_t> frame = sealed_frame_bytes(a, 3, "hello");
  frame[kFrameHeaderBytes + 2] ^= 0x01;
  send_raw(a, frame);
  expect_refused_then_closed(b);
}

TEST(SealedLink, TamperedHeaderIsRefused) {
  Socket a, b;
  sealed_pair(&a, &b);
  std::vector<uint8_t> frame = sealed_frame_bytes(a, 3, "hello");
  frame[4] ^= 0x01;  // the type: authenticated as additional data
  send_raw(a, frame);
  expect_refused_then_closed(b);
}

TEST(SealedLink, DroppedFrameIsRefused) {
  Socket a, b;
  sealed_pair(&a, &b);
  (void)sealed_frame_bytes(a, 3, "first");  // sealed, never delivered
  send_raw(a, sealed_frame_bytes(a, 3, "second"));
  expect_refused_then_closed(b);
}

TEST(SealedLink, ReplayedFrameIsRefused) {
  Socket a, b;
  sealed_pair(&a, &b);
  const std::vector<uint8_t> frame = sealed_frame_bytes(a, 3, "pay me");
  send_raw(a, frame);
  auto f = read_frame(b, 1024, 2000);
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  send_raw(a, frame);
  expect_refused_then_closed(b);
}

TEST(SealedLink, PlaintextFrameIsRefused) {
  Socket a, b;
  sealed_pair(&a, &b);
  std::vector<uint8_t> frame(kFrameHeaderBytes + 20, 'p');
  encode_frame_header(frame.data(), 3, 0, 20);
  send_raw(a, frame);
  expect_refused_then_closed(b);
}

TEST(SealedLink, FrameFromAnotherConnectionIsRefused) {
  Socket a, b, c, d;
  sealed_pair(&a, &b);
  sealed_pair(&c, &d);
  send_raw(a, sealed_frame_bytes(c, 3, "recorded elsewhere"));
  expect_refused_then_closed(b);
}

TEST(SealedLink, MismatchedSettingIsRefusedClearlyOnBothEnds) {
  const ClusterKey key = generate_cluster_key();
  for (bool initiator_seals : {true, false}) {
    Socket a, b;
    connected_pair(&a, &b);
    SealedBoth r = sealed_run_both(a, b, with_sealing(key, initiator_seals),
                                   with_sealing(key, !initiator_seals));
    for (const Result<PeerInfo>* end : {&r.a, &r.b}) {
      ASSERT_FALSE(end->is_ok());
      EXPECT_EQ(end->status().code(), StatusCode::kUnsupported) << end->status().message();
      EXPECT_NE(end->status().message().find("--encrypt"), std::string::npos)
          << end->status().message();
    }
    EXPECT_EQ(a.channel(), nullptr);
    EXPECT_FALSE(a.is_open());  // no traffic of either kind after a refusal
  }
}

TEST(SealedLink, WrongKeyStillFailsAuthBeforeSealing) {
  Socket a, b;
  connected_pair(&a, &b);
  SealedBoth r = sealed_run_both(a, b, with_sealing(generate_cluster_key(), true),
                                 with_sealing(generate_cluster_key(), true));
  ASSERT_FALSE(r.a.is_ok());
  ASSERT_FALSE(r.b.is_ok());
  EXPECT_EQ(r.a.status().code(), StatusCode::kUnavailable) << r.a.status().message();
  EXPECT_EQ(a.channel(), nullptr);
}

TEST(SealedLink, HelloCarriesLinkFlagsAndRejectsUnknownOnes) {
  Nonce n{};
  KxPublicKey pk{};
  pk[0] = 9;
  auto bytes = encode_hello(sealed_info("x"), n, kLinkFlagSealed, pk);
  auto h = decode_hello(bytes.data(), bytes.size());
  ASSERT_TRUE(h.is_ok()) << h.status().message();
  EXPECT_EQ(h->link_flags, kLinkFlagSealed);
  EXPECT_EQ(h->kx_public, pk);
  bytes = encode_hello(sealed_info("x"), n, 0x80, pk);
  h = decode_hello(bytes.data(), bytes.size());
  ASSERT_FALSE(h.is_ok());
  EXPECT_EQ(h.status().code(), StatusCode::kCorrupt);
}

}  // namespace
}  // namespace cohort::net
