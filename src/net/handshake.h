// The first exchange on every cluster connection: a versioned HELLO each way, then a mutual
// proof that both ends hold the cluster key, then (on sealed links) the stream headers.
// Nothing else may be sent before it succeeds.
//
// Protocol (frames, frame.h):
//   1. Both ends send HELLO (type kFrameTypeHello):
//        u32 magic "COHH", u32 protocol_version, str role, str name, u64 capabilities,
//        32-byte random nonce, u32 link_flags, 32-byte X25519 public key (crypto_kx;
//        zeros unless sealed).
//      Each reads the other's; a different protocol_version fails with kUnsupported naming
//      both versions (both ends see it). link_flags bit 0 (kLinkFlagSealed) is the end's
//      `--encrypt` setting (ClusterKey::encrypt_traffic); ends that differ both fail with
//      kUnsupported "handshake: ... --encrypt ..." before any proof, and never fall back to
//      plaintext. Unknown flag bits are kCorrupt.
//   2. Proofs (type kFrameTypeProof, 32 bytes): proof = HMAC-SHA256(key, "cohort-auth-v1" |
//      side | own role | own nonce | peer nonce | own HELLO bytes | peer HELLO bytes), side
//      being 'I' for the end that connected and 'R' for the end that accepted. The
//      initiator sends first; the responder verifies it (constant time) before it sends its
//      own, so an end without the key never obtains a proof from a responder. Fresh nonces
//      on both ends defeat replay; the side byte defeats reflecting a proof back to its
//      sender; the HELLO bytes in the MAC defeat tampering with either HELLO (its flags and
//      public key included).
//   3. Sealed links only: each end derives its session keys (secure_channel.h:
//      derive_session_keys), starts its send stream and sends the stream header (type
//      kFrameTypeStreamHeader, 24 bytes); each reads the other's and seals the socket
//      (Socket::seal_with). Every later frame is encrypted and authenticated (frame.h).
//
// Failure messages: "handshake: ..." for a missing, malformed or incompatible HELLO;
// "auth: peer <addr> did not prove the cluster key" (kUnavailable) for a wrong key or a
// wrong proof. On any failure the socket is shut down (unusable). No key material is ever
// logged or put into a message.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "net/cluster_key.h"
#include "net/secure_channel.h"
#include "net/socket.h"

namespace cohort::net {

// 2: shard shipping, worker-to-worker probes, SetupRequest.n_slots, slot in step headers.
// 3: batched steps (several slots in one step, runtime/cluster_stepper.cpp).
//    and expert ranges in shard specs, the expert parallel mode.
// 4: hidden-state steps (embeddings: the last stage sends normed hidden states, not logits).
// 5: link flags and a key-exchange public key in HELLO; sealed links (--encrypt); worker
//    heartbeats on the control connection (message 19, carrying step times).
inline constexpr uint32_t kProtocolVersion = 5;

inline constexpr uint16_t kFrameTypeHello = 0xFF01;
inline constexpr uint16_t kFrameTypeProof = 0xFF02;
inline constexpr uint16_t kFrameTypeStreamHeader = 0xFF03;
inline constexpr uint32_t kLinkFlagSealed = 1u << 0;
inline constexpr uint32_t kKnownLinkFlags = kLinkFlagSealed;
inline constexpr uint32_t kHelloMagic = 0x48484F43;  // "COHH" on the wire
inline constexpr size_t kNonceBytes = 32;
inline constexpr size_t kProofBytes = 32;
inline constexpr size_t kMaxPeerNameBytes = 256;
inline constexpr size_t kMaxPeerRoleBytes = 64;
inline constexpr size_t kMaxHelloBytes = 1024;

struct PeerInfo {
  uint32_t protocol_version = kProtocolVersion;
  std::string name;           // human-readable node name, <= kMaxPeerNameBytes, printable
  std::string role;           // "head", "worker", ... <= kMaxPeerRoleBytes, printable
  uint64_t capabilities = 0;  // bit set; meanings are defined by the users of the link
};

// Runs the handshake on a freshly connected or accepted socket, within timeout_ms for the
// whole exchange, and returns the peer's info. `mine.protocol_version` is what this end
// announces (kProtocolVersion in production). Uses s from this thread only.
Result<PeerInfo> handshake(Socket& s, const ClusterKey& key, const PeerInfo& mine,
                           int64_t timeout_ms);

// --- Building blocks, exposed for tests and diagnostic tools. ---

using Nonce = std::array<uint8_t, kNonceBytes>;
using Proof = std::array<uint8_t, kProofBytes>;

struct Hello {
  PeerInfo info;
  Nonce nonce{};
  uint32_t link_flags = 0;
  KxPublicKey kx_public{};
};

std::vector<uint8_t> encode_hello(const PeerInfo& info, const Nonce& nonce, uint32_t link_flags = 0,
                                  const KxPublicKey& kx_public = {});
// kCorrupt "handshake: ..." on bad bytes. A HELLO of another protocol version is decoded
// only up to its version (its layout may differ): the result then carries just that.
Result<Hello> decode_hello(const uint8_t* p, size_t n);

Proof compute_proof(const ClusterKey& key, bool initiator, std::string_view own_role,
                    const Nonce& own_nonce, const Nonce& peer_nonce,
                    const std::vector<uint8_t>& own_hello, const std::vector<uint8_t>& peer_hello);

}  // namespace cohort::net
