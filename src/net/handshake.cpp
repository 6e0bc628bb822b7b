#include "net/handshake.h"

#include <sodium.h>

#include <algorithm>

#include "core/clock.h"
#include "net/frame.h"
#include "net/wire.h"

namespace cohort::net {
namespace {

constexpr char kAuthLabel[] = "cohort-auth-v1";

bool printable(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u != 0x7f;
  });
}

void mac_update(crypto_auth_hmacsha256_state* st, const void* p, size_t n) {
  crypto_auth_hmacsha256_update(st, static_cast<const unsigned char*>(p), n);
}

void mac_update_sized(crypto_auth_hmacsha256_state* st, const void* p, size_t n) {
  uint8_t len[4];
  for (int i = 0; i < 4; ++i) len[i] = static_cast<uint8_t>(n >> (8 * i));
  mac_update(st, len, sizeof(len));
  mac_update(st, p, n);
}

class Handshake {
 public:
  Handshake(Socket& s, const ClusterKey& key, const PeerInfo& mine, int64_t timeout_ms)
      : s_(s), key_(key), mine_(mine), timeout_ms_(timeout_ms), start_ns_(now_ns()) {}

  Result<PeerInfo> run() {
    Result<PeerInfo> r = steps();
    if (!r.is_ok()) s_.shutdown();
    return r;
  }

 private:
  int64_t left_ms() const {
    if (timeout_ms_ < 0) return -1;
    return std::max<int64_t>(timeout_ms_ - (now_ns() - start_ns_) / 1'000'000, 0);
  }

  std::string who() const { return "peer " + s_.peer(); }

  Status auth_failed() const {
    return Status::unavailable("auth: " + who() + " did not prove the cluster key");
  }

  Result<PeerInfo> steps() {
    if (mine_.name.size() > kMaxPeerNameBytes || mine_.role.size() > kMaxPeerRoleBytes) {
      return Status::invalid_argument("handshake: own name or role is too long");
    }
    ensure_sodium();
    Nonce own_nonce;
    randombytes_buf(own_nonce.data(), own_nonce.size());
    const bool sealed = key_.encrypt_traffic;
    KxKeyPair kx;
    if (sealed) kx = KxKeyPair::generate();
    const std::vector<uint8_t> own_hello =
        encode_hello(mine_, own_nonce, sealed ? kLinkFlagSealed : 0, kx.public_key);
    Status st = write_frame(s_, kFrameTypeHello, own_hello.data(), own_hello.size(), left_ms());
    if (!st.is_ok()) return Status(st.code(), "handshake: cannot send HELLO: " + st.message());

    Result<Frame> f = read_frame(s_, kMaxHelloBytes, left_ms());
    if (!f.is_ok()) return hello_error(f.status());
    if (f->type != kFrameTypeHello) {
      return Status::corrupt("handshake: " + who() + " sent frame type " + std::to_string(f->type) +
                             " instead of HELLO");
    }
    const std::vector<uint8_t> peer_hello = std::move(f->payload);
    Result<Hello> hello = decode_hello(peer_hello.data(), peer_hello.size());
    if (!hello.is_ok()) {
      return Status::corrupt("handshake: " + who() +
                             " sent a bad HELLO: " + hello.status().message());
    }
    if (hello->info.protocol_version != mine_.protocol_version) {
      return Status::unsupported("handshake: " + who() + " speaks protocol version " +
                                 std::to_string(hello->info.protocol_version) +
                                 ", this node speaks version " +
                                 std::to_string(mine_.protocol_version));
    }
    const bool peer_sealed = (hello->link_flags & kLinkFlagSealed) != 0;
    if (peer_sealed != sealed) return sealing_mismatch(peer_sealed);

    const bool initiator = s_.is_initiator();
    const Proof own_proof =
        compute_proof(key_, initiator, mine_.role, own_nonce, hello->nonce, own_hello, peer_hello);
    const Proof expected = compute_proof(key_, !initiator, hello->info.role, hello->nonce,
                                         own_nonce, peer_hello, own_hello);
    if (initiator) {
      COHORT_RETURN_IF_ERROR(send_proof(own_proof));
      COHORT_RETURN_IF_ERROR(check_proof(expected));
    } else {
      COHORT_RETURN_IF_ERROR(check_proof(expected));
      COHORT_RETURN_IF_ERROR(send_proof(own_proof));
    }
    if (sealed) {
      COHORT_RETURN_IF_ERROR(seal(kx, hello->kx_public, own_hello, peer_hello));
    }
    return std::move(hello->info);
  }

  Status sealing_mismatch(bool peer_sealed) const {
    const std::string fix = "; start every node of the cluster with the same --encrypt setting";
    if (peer_sealed) {
      return Status::unsupported("handshake: " + who() +
                                 " encrypts cluster traffic (--encrypt) and this node does not" +
                                 fix);
    }
    return Status::unsupported("handshake: this node encrypts cluster traffic (--encrypt) and " +
                               who() + " does not" + fix);
  }

  // Step 3: session keys, stream headers both ways, then the socket is sealed.
  Status seal(const KxKeyPair& kx, const KxPublicKey& peer_public,
              const std::vector<uint8_t>& own_hello, const std::vector<uint8_t>& peer_hello) {
    COHORT_ASSIGN_OR_RETURN(
        const SessionKeys keys,
        derive_session_keys(key_, s_.is_initiator(), kx, peer_public, own_hello.data(),
                            own_hello.size(), peer_hello.data(), peer_hello.size()));
    StreamHeader header;
    std::unique_ptr<SecureChannel> channel = SecureChannel::start(keys, &header);
    Status st = write_frame(s_, kFrameTypeStreamHeader, header.data(), header.size(), left_ms());
    if (!st.is_ok()) {
      return Status(st.code(),
                    "handshake: cannot send the stream header to " + who() + ": " + st.message());
    }
    Result<Frame> f = read_frame(s_, kStreamHeaderBytes, left_ms());
    if (!f.is_ok()) {
      return Status(f.status().code(),
                    "handshake: no stream header from " + who() + ": " + f.status().message());
    }
    if (f->type != kFrameTypeStreamHeader || f->payload.size() != kStreamHeaderBytes) {
      return Status::corrupt("handshake: " + who() + " sent a bad stream header");
    }
    StreamHeader peer_header;
    std::copy(f->payload.begin(), f->payload.end(), peer_header.begin());
    COHORT_RETURN_IF_ERROR(channel->accept_peer_header(peer_header));
    s_.seal_with(std::move(channel));
    return Status::ok();
  }

  Status hello_error(const Status& st) const {
    switch (st.code()) {
      case StatusCode::kTimeout:
        return Status::timeout("handshake: no HELLO from " + who() + " within " +
                               std::to_string(timeout_ms_) + " ms");
      case StatusCode::kUnavailable:
        return Status::unavailable("handshake: " + who() +
                                   " closed the connection before its HELLO");
      default:
        return Status(st.code(), "handshake: no valid HELLO from " + who() + ": " + st.message());
    }
  }

  Status send_proof(const Proof& proof) {
    const Status st = write_frame(s_, kFrameTypeProof, proof.data(), proof.size(), left_ms());
    if (st.is_ok()) return st;
    // A responder that rejected our proof closes the connection.
    if (st.code() == StatusCode::kUnavailable) return auth_failed();
    return Status(st.code(), "auth: cannot send proof to " + who() + ": " + st.message());
  }

  Status check_proof(const Proof& expected) {
    Result<Frame> f = read_frame(s_, kProofBytes, left_ms());
    if (!f.is_ok()) {
      if (f.status().code() == StatusCode::kTimeout) {
        return Status::timeout("auth: " + who() + " sent no proof within " +
                               std::to_string(timeout_ms_) + " ms");
      }
      if (f.status().code() == StatusCode::kUnavailable) {
        // The other end closes when it rejects our proof: most likely a different key.
        return Status::unavailable("auth: " + who() +
                                   " did not prove the cluster key (it closed the connection; "
                                   "does it hold a different key?)");
      }
      return auth_failed();
    }
    if (f->type != kFrameTypeProof || f->payload.size() != kProofBytes) return auth_failed();
    if (sodium_memcmp(f->payload.data(), expected.data(), kProofBytes) != 0) return auth_failed();
    return Status::ok();
  }

  Socket& s_;
  const ClusterKey& key_;
  const PeerInfo& mine_;
  int64_t timeout_ms_;
  int64_t start_ns_;
};

}  // namespace

Result<PeerInfo> handshake(Socket& s, const ClusterKey& key, const PeerInfo& mine,
                           int64_t timeout_ms) {
  return Handshake(s, key, mine, timeout_ms).run();
}

std::vector<uint8_t> encode_hello(const PeerInfo& info, const Nonce& nonce, uint32_t link_flags,
                                  const KxPublicKey& kx_public) {
  WireWriter w;
  w.u32(kHelloMagic).u32(info.protocol_version).str(info.role).str(info.name);
  w.u64(info.capabilities).raw(nonce.data(), nonce.size());
  w.u32(link_flags).raw(kx_public.data(), kx_public.size());
  return w.take();
}

Result<Hello> decode_hello(const uint8_t* p, size_t n) {
  WireReader r(p, n);
  uint32_t magic = 0;
  Hello h;
  COHORT_RETURN_IF_ERROR(r.u32(&magic));
  if (magic != kHelloMagic) return Status::corrupt("handshake: HELLO has a bad magic");
  COHORT_RETURN_IF_ERROR(r.u32(&h.info.protocol_version));
  if (h.info.protocol_version != kProtocolVersion) return h;
  COHORT_RETURN_IF_ERROR(r.str(&h.info.role, kMaxPeerRoleBytes));
  COHORT_RETURN_IF_ERROR(r.str(&h.info.name, kMaxPeerNameBytes));
  COHORT_RETURN_IF_ERROR(r.u64(&h.info.capabilities));
  COHORT_RETURN_IF_ERROR(r.raw(h.nonce.data(), h.nonce.size()));
  COHORT_RETURN_IF_ERROR(r.u32(&h.link_flags));
  COHORT_RETURN_IF_ERROR(r.raw(h.kx_public.data(), h.kx_public.size()));
  COHORT_RETURN_IF_ERROR(r.expect_end());
  if ((h.link_flags & ~kKnownLinkFlags) != 0) {
    return Status::corrupt("handshake: HELLO has unknown link flags");
  }
  if (!printable(h.info.role) || !printable(h.info.name)) {
    return Status::corrupt("handshake: HELLO name or role has control characters");
  }
  return h;
}

Proof compute_proof(const ClusterKey& key, bool initiator, std::string_view own_role,
                    const Nonce& own_nonce, const Nonce& peer_nonce,
                    const std::vector<uint8_t>& own_hello, const std::vector<uint8_t>& peer_hello) {
  ensure_sodium();
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, key.bytes.data(), key.bytes.size());
  mac_update(&st, kAuthLabel, sizeof(kAuthLabel) - 1);
  const uint8_t side = initiator ? 'I' : 'R';
  mac_update(&st, &side, 1);
  mac_update_sized(&st, own_role.data(), own_role.size());
  mac_update(&st, own_nonce.data(), own_nonce.size());
  mac_update(&st, peer_nonce.data(), peer_nonce.size());
  mac_update_sized(&st, own_hello.data(), own_hello.size());
  mac_update_sized(&st, peer_hello.data(), peer_hello.size());
  Proof out;
  crypto_auth_hmacsha256_final(&st, out.data());
  sodium_memzero(&st, sizeof(st));
  return out;
}

}  // namespace cohort::net
