// Sealed links: the state that encrypts and authenticates every frame of one connection
// after its handshake, when the cluster runs with encryption on (`--encrypt`).
//
// Each direction of a connection is one libsodium crypto_secretstream_xchacha20poly1305
// stream under its own 32-byte session key (derive_session_keys). The sender's stream
// header (24 random bytes) goes to the receiver once, during the handshake; after that every
// frame is one stream message whose ciphertext is the frame's payload plus kSealBytes, with
// the frame header as additional data. The stream's internal counter makes every message
// depend on all before it, so a flipped bit, a dropped, reordered or replayed frame, or a
// frame from another connection fails authentication; after one failure the receiving
// half refuses everything (the stream state is spent), and frame.cpp shuts the socket down.
//
// Thread-safety: the send half (seal) and the receive half (open) may each be used by one
// thread at a time, concurrently with each other, matching Socket's one-reader-one-writer
// rule. Keys and stream states are wiped when the channel is destroyed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/status.h"
#include "net/cluster_key.h"

namespace cohort::net {

inline constexpr size_t kSessionKeyBytes = 32;
inline constexpr size_t kStreamHeaderBytes = 24;  // crypto_secretstream_..._HEADERBYTES
inline constexpr size_t kSealBytes = 17;          // ciphertext growth per message (ABYTES)
inline constexpr size_t kKxPublicKeyBytes = 32;
inline constexpr size_t kKxSecretKeyBytes = 32;

using SessionKey = std::array<uint8_t, kSessionKeyBytes>;
using StreamHeader = std::array<uint8_t, kStreamHeaderBytes>;
using KxPublicKey = std::array<uint8_t, kKxPublicKeyBytes>;

// An ephemeral X25519 key pair (crypto_kx), one per handshake; the secret is wiped on
// destruction.
struct KxKeyPair {
  KxPublicKey public_key{};
  std::array<uint8_t, kKxSecretKeyBytes> secret_key{};
  static KxKeyPair generate();
  KxKeyPair() = default;
  KxKeyPair(KxKeyPair&&) = default;  // copies the bytes; the source wipes its own
  KxKeyPair& operator=(KxKeyPair&&) = default;
  ~KxKeyPair();
};

// One key per direction, wiped on destruction.
struct SessionKeys {
  SessionKey send{};
  SessionKey recv{};
  SessionKeys() = default;
  SessionKeys(SessionKeys&&) = default;  // copies the bytes; the source wipes its own
  SessionKeys& operator=(SessionKeys&&) = default;
  ~SessionKeys();
};

// Per-direction session keys for one connection. `initiator` is this end's role (the end
// that connected); own/peer HELLO are the exact HELLO payloads both ends sent (they carry
// both nonces, both roles and both key-exchange public keys). Each key is
//   BLAKE2b-256(key = cluster key,
//               "cohort-seal-v1" | direction ('I' initiator->responder, 'R' back) |
//               crypto_kx key of that direction | BLAKE2b-256(initiator HELLO | responder HELLO))
// so a key needs both the cluster key and the ephemeral X25519 secret (forward secrecy: a
// recorded session stays sealed if the cluster key leaks later), and differs for every
// connection and direction. kCorrupt "handshake: ..." when the peer's public key is unusable
// (a low-order point).
Result<SessionKeys> derive_session_keys(const ClusterKey& key, bool initiator, const KxKeyPair& own,
                                        const KxPublicKey& peer_public, const uint8_t* own_hello,
                                        size_t own_hello_bytes, const uint8_t* peer_hello,
                                        size_t peer_hello_bytes);

class SecureChannel {
 public:
  // Starts the send stream under keys.send; *header is what the peer needs to open it.
  static std::unique_ptr<SecureChannel> start(const SessionKeys& keys, StreamHeader* header);
  // Starts the receive stream under the recv key given to start(), with the peer's header.
  // kCorrupt when the header is unusable. Call once, before open().
  Status accept_peer_header(const StreamHeader& header);

  // Encrypts n bytes of m, binding the ad bytes (the frame header), into an internal buffer
  // of n + kSealBytes bytes, valid until the next seal(). n must be < 2^32. A buffer grown
  // for an unusually large message is released by the next small one.
  const uint8_t* seal(const uint8_t* ad, size_t ad_bytes, const void* m, size_t n);
  // Decrypts c_bytes (>= kSealBytes) of ciphertext into out (c_bytes - kSealBytes bytes).
  // kCorrupt when it fails authentication or is not a plain message; every later call then
  // fails too.
  Status open(const uint8_t* ad, size_t ad_bytes, const uint8_t* c, size_t c_bytes, void* out);

  // Scratch for the receiver's ciphertext (receive half only), kept between frames so a
  // busy link does not allocate per frame; release_large_recv_buffer() after an unusually
  // large frame gives its memory back.
  std::vector<uint8_t>& recv_buffer() { return recv_buf_; }
  void release_large_recv_buffer();

  ~SecureChannel();
  SecureChannel(const SecureChannel&) = delete;
  SecureChannel& operator=(const SecureChannel&) = delete;

 private:
  SecureChannel();
  struct State;
  std::unique_ptr<State> state_;
  std::vector<uint8_t> send_buf_;
  std::vector<uint8_t> recv_buf_;
};

}  // namespace cohort::net
