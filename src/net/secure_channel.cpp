#include "net/secure_channel.h"

#include <sodium.h>

#include "core/check.h"

namespace cohort::net {

static_assert(kStreamHeaderBytes == crypto_secretstream_xchacha20poly1305_HEADERBYTES);
static_assert(kSealBytes == crypto_secretstream_xchacha20poly1305_ABYTES);
static_assert(kSessionKeyBytes == crypto_secretstream_xchacha20poly1305_KEYBYTES);
static_assert(kSessionKeyBytes == crypto_kx_SESSIONKEYBYTES);
static_assert(kKxPublicKeyBytes == crypto_kx_PUBLICKEYBYTES);
static_assert(kKxSecretKeyBytes == crypto_kx_SECRETKEYBYTES);
static_assert(kClusterKeyBytes >= crypto_generichash_KEYBYTES_MIN &&
              kClusterKeyBytes <= crypto_generichash_KEYBYTES_MAX);

namespace {

constexpr char kSealLabel[] = "cohort-seal-v1";
// Buffers up to this size stay allocated between frames; larger ones are released.
constexpr size_t kKeepBufferBytes = 8u << 20;

void hash_sized(crypto_generichash_state* st, const uint8_t* p, size_t n) {
  uint8_t len[4];
  for (int i = 0; i < 4; ++i) len[i] = static_cast<uint8_t>(n >> (8 * i));
  crypto_generichash_update(st, len, sizeof(len));
  crypto_generichash_update(st, p, n);
}

// The key of one direction: keyed BLAKE2b over the label, the direction, that direction's
// crypto_kx key and the transcript hash.
void direction_key(const ClusterKey& key, uint8_t direction, const uint8_t* kx_key,
                   const uint8_t* transcript, uint8_t* out) {
  crypto_generichash_state st;
  crypto_generichash_init(&st, key.bytes.data(), key.bytes.size(), kSessionKeyBytes);
  crypto_generichash_update(&st, reinterpret_cast<const uint8_t*>(kSealLabel),
                            sizeof(kSealLabel) - 1);
  crypto_generichash_update(&st, &direction, 1);
  crypto_generichash_update(&st, kx_key, kSessionKeyBytes);
  crypto_generichash_update(&st, transcript, crypto_generichash_BYTES);
  crypto_generichash_final(&st, out, kSessionKeyBytes);
  sodium_memzero(&st, sizeof(st));
}

}  // namespace

KxKeyPair KxKeyPair::generate() {
  ensure_sodium();
  KxKeyPair kp;
  crypto_kx_keypair(kp.public_key.data(), kp.secret_key.data());
  return kp;
}

KxKeyPair::~KxKeyPair() { sodium_memzero(secret_key.data(), secret_key.size()); }

SessionKeys::~SessionKeys() {
  sodium_memzero(send.data(), send.size());
  sodium_memzero(recv.data(), recv.size());
}

Result<SessionKeys> derive_session_keys(const ClusterKey& key, bool initiator, const KxKeyPair& own,
                                        const KxPublicKey& peer_public, const uint8_t* own_hello,
                                        size_t own_hello_bytes, const uint8_t* peer_hello,
                                        size_t peer_hello_bytes) {
  ensure_sodium();
  // crypto_kx: the initiator is the "client". Its tx key is the responder's rx key.
  SessionKey kx_rx, kx_tx;
  const int rc =
      initiator ? crypto_kx_client_session_keys(kx_rx.data(), kx_tx.data(), own.public_key.data(),
                                                own.secret_key.data(), peer_public.data())
                : crypto_kx_server_session_keys(kx_rx.data(), kx_tx.data(), own.public_key.data(),
                                                own.secret_key.data(), peer_public.data());
  if (rc != 0) {
    return Status::corrupt("handshake: the peer's key-exchange public key is unusable");
  }
  // The transcript in a fixed order (initiator's HELLO first), the same on both ends.
  uint8_t transcript[crypto_generichash_BYTES];
  crypto_generichash_state st;
  crypto_generichash_init(&st, nullptr, 0, sizeof(transcript));
  if (initiator) {
    hash_sized(&st, own_hello, own_hello_bytes);
    hash_sized(&st, peer_hello, peer_hello_bytes);
  } else {
    hash_sized(&st, peer_hello, peer_hello_bytes);
    hash_sized(&st, own_hello, own_hello_bytes);
  }
  crypto_generichash_final(&st, transcript, sizeof(transcript));

  Result<SessionKeys> out{SessionKeys()};
  const uint8_t send_dir = initiator ? 'I' : 'R';
  const uint8_t recv_dir = initiator ? 'R' : 'I';
  direction_key(key, send_dir, kx_tx.data(), transcript, out->send.data());
  direction_key(key, recv_dir, kx_rx.data(), transcript, out->recv.data());
  sodium_memzero(kx_rx.data(), kx_rx.size());
  sodium_memzero(kx_tx.data(), kx_tx.size());
  return out;
}

struct SecureChannel::State {
  crypto_secretstream_xchacha20poly1305_state push{};
  crypto_secretstream_xchacha20poly1305_state pull{};
  SessionKey recv_key{};
  bool pull_ready = false;
  bool pull_failed = false;
  ~State() { sodium_memzero(this, sizeof(*this)); }
};

SecureChannel::SecureChannel() : state_(std::make_unique<State>()) {}
SecureChannel::~SecureChannel() = default;

std::unique_ptr<SecureChannel> SecureChannel::start(const SessionKeys& keys, StreamHeader* header) {
  ensure_sodium();
  std::unique_ptr<SecureChannel> c(new SecureChannel());
  crypto_secretstream_xchacha20poly1305_init_push(&c->state_->push, header->data(),
                                                  keys.send.data());
  c->state_->recv_key = keys.recv;
  return c;
}

Status SecureChannel::accept_peer_header(const StreamHeader& header) {
  State& s = *state_;
  COHORT_CHECK_MSG(!s.pull_ready, "SecureChannel: the peer's header was already accepted");
  const int rc =
      crypto_secretstream_xchacha20poly1305_init_pull(&s.pull, header.data(), s.recv_key.data());
  sodium_memzero(s.recv_key.data(), s.recv_key.size());
  if (rc != 0) return Status::corrupt("seal: the peer's stream header is unusable");
  s.pull_ready = true;
  return Status::ok();
}

const uint8_t* SecureChannel::seal(const uint8_t* ad, size_t ad_bytes, const void* m, size_t n) {
  const size_t c_bytes = n + kSealBytes;
  if (send_buf_.capacity() > kKeepBufferBytes && c_bytes <= kKeepBufferBytes) {
    std::vector<uint8_t>().swap(send_buf_);
  }
  send_buf_.resize(c_bytes);
  static const uint8_t kNothing = 0;  // an empty message may come as a null pointer
  const auto* src = n == 0 ? &kNothing : static_cast<const uint8_t*>(m);
  crypto_secretstream_xchacha20poly1305_push(&state_->push, send_buf_.data(), nullptr, src, n, ad,
                                             ad_bytes,
                                             crypto_secretstream_xchacha20poly1305_TAG_MESSAGE);
  return send_buf_.data();
}

Status SecureChannel::open(const uint8_t* ad, size_t ad_bytes, const uint8_t* c, size_t c_bytes,
                           void* out) {
  State& s = *state_;
  if (!s.pull_ready || s.pull_failed) {
    return Status::corrupt("seal: the receive stream is unusable after an earlier failure");
  }
  if (c_bytes < kSealBytes) {
    s.pull_failed = true;
    return Status::corrupt("seal: a sealed frame shorter than its authentication tag");
  }
  unsigned char tag = 0;
  uint8_t nothing = 0;  // an empty message may come with a null destination
  auto* dst = c_bytes == kSealBytes ? &nothing : static_cast<uint8_t*>(out);
  const int rc = crypto_secretstream_xchacha20poly1305_pull(&s.pull, dst, nullptr, &tag, c, c_bytes,
                                                            ad, ad_bytes);
  if (rc != 0 || tag != crypto_secretstream_xchacha20poly1305_TAG_MESSAGE) {
    s.pull_failed = true;
    // Nothing unauthenticated may be used: wipe what pull may have written.
    sodium_memzero(dst, c_bytes - kSealBytes);
    return Status::corrupt(
        "seal: a frame failed authentication (tampered, dropped, reordered, replayed or from "
        "another session)");
  }
  return Status::ok();
}

void SecureChannel::release_large_recv_buffer() {
  if (recv_buf_.capacity() > kKeepBufferBytes) std::vector<uint8_t>().swap(recv_buf_);
}

}  // namespace cohort::net
