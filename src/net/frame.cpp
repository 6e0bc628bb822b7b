#include "net/frame.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "core/clock.h"
#include "net/secure_channel.h"

namespace cohort::net {
namespace {

// Payloads above this are grown chunk by chunk as bytes arrive, so a peer that claims a
// large frame and stalls costs us only what it actually sent.
constexpr size_t kGrowChunkBytes = 16u << 20;

void put_u16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint16_t get_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t get_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

int64_t remaining_ms(int64_t timeout_ms, int64_t start_ns) {
  if (timeout_ms < 0) return -1;
  const int64_t left = timeout_ms - (now_ns() - start_ns) / 1'000'000;
  return std::max<int64_t>(left, 0);
}

Status cut_off(Socket& s, const Status& st) {
  if (st.code() != StatusCode::kTimeout) return st;
  s.shutdown();
  return Status::timeout(st.message() + " in the middle of a frame; connection shut down");
}

// Fills *why (empty when the header is good). seal_bytes: what a sealed link adds to every
// payload on the wire (0 on a plaintext link); the result's payload_bytes excludes it.
FrameHeader parse_header(const uint8_t* in, size_t max_payload_bytes, size_t seal_bytes,
                         std::string* why) {
  FrameHeader h;
  const uint32_t magic = get_u32(in);
  if (magic != kFrameMagic) {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "0x%08x", magic);
    *why = std::string("bad magic ") + hex + " (not a cohort peer?)";
    return h;
  }
  h.type = get_u16(in + 4);
  h.flags = get_u16(in + 6);
  const uint32_t wire_bytes = get_u32(in + 8);
  const size_t limit = std::min<size_t>(max_payload_bytes, kMaxFrameBytes);
  if (wire_bytes < seal_bytes) {
    *why = "a sealed frame of type " + std::to_string(h.type) + " with only " +
           std::to_string(wire_bytes) + " bytes, less than its authentication tag";
    return h;
  }
  h.payload_bytes = static_cast<uint32_t>(wire_bytes - seal_bytes);
  if (h.payload_bytes > limit) {
    *why = "type " + std::to_string(h.type) + " claiming " + std::to_string(h.payload_bytes) +
           " payload bytes, over the limit of " + std::to_string(limit);
  }
  return h;
}

// Reads n bytes into (*buf)[0, n), growing *buf chunk by chunk as bytes arrive (never
// shrinking it, so a reused buffer is not cleared per frame).
Status read_grown(Socket& s, std::vector<uint8_t>* buf, size_t n, int64_t timeout_ms) {
  const int64_t start_ns = now_ns();
  size_t have = 0;
  while (have < n) {
    const size_t step = std::min(n - have, std::max(kGrowChunkBytes, have));
    if (buf->size() < have + step) buf->resize(have + step);
    Status st = s.read_exact(buf->data() + have, step, remaining_ms(timeout_ms, start_ns));
    if (!st.is_ok()) return cut_off(s, st);
    have += step;
  }
  return Status::ok();
}

// Authenticates and decrypts the c_bytes of ciphertext in the channel's receive buffer into
// out. A failure breaks the link: the socket is shut down.
Status open_sealed(Socket& s, SecureChannel& c, const FrameHeader& h, size_t c_bytes, void* out) {
  uint8_t ad[kFrameHeaderBytes];
  encode_frame_header(ad, h.type, h.flags, static_cast<uint32_t>(c_bytes));
  Status st = c.open(ad, sizeof(ad), c.recv_buffer().data(), c_bytes, out);
  c.release_large_recv_buffer();
  if (st.is_ok()) return st;
  s.shutdown();
  return Status::corrupt("frame: peer " + s.peer() + ": " + st.message() +
                         "; connection shut down");
}

}  // namespace

void encode_frame_header(uint8_t out[kFrameHeaderBytes], uint16_t type, uint16_t flags,
                         uint32_t payload_bytes) {
  put_u32(out, kFrameMagic);
  put_u16(out + 4, type);
  put_u16(out + 6, flags);
  put_u32(out + 8, payload_bytes);
}

Result<FrameHeader> decode_frame_header(const uint8_t in[kFrameHeaderBytes],
                                        size_t max_payload_bytes) {
  std::string why;
  FrameHeader h = parse_header(in, max_payload_bytes, 0, &why);
  if (!why.empty()) return Status::corrupt("frame: " + why);
  return h;
}

Status write_frame(Socket& s, uint16_t type, const void* payload, size_t bytes, int64_t timeout_ms,
                   uint16_t flags) {
  if (bytes > kMaxFrameBytes) {
    return Status::invalid_argument("frame: payload of " + std::to_string(bytes) +
                                    " bytes exceeds the frame limit");
  }
  uint8_t header[kFrameHeaderBytes];
  SecureChannel* c = s.channel();
  if (c == nullptr) {
    encode_frame_header(header, type, flags, static_cast<uint32_t>(bytes));
    return s.write_all2(header, sizeof(header), payload, bytes, timeout_ms);
  }
  const size_t c_bytes = bytes + kSealBytes;
  encode_frame_header(header, type, flags, static_cast<uint32_t>(c_bytes));
  const uint8_t* sealed = c->seal(header, sizeof(header), payload, bytes);
  Status st = s.write_all2(header, sizeof(header), sealed, c_bytes, timeout_ms);
  // The send stream has moved past this frame whether or not it left: the link is unusable.
  if (!st.is_ok()) s.shutdown();
  return st;
}

Result<FrameHeader> read_frame_header(Socket& s, size_t max_payload_bytes, int64_t timeout_ms,
                                      size_t* bytes_read) {
  uint8_t header[kFrameHeaderBytes];
  size_t got = 0;
  Status st = s.read_exact_counted(header, sizeof(header), timeout_ms, &got);
  if (bytes_read != nullptr) *bytes_read = got;
  if (!st.is_ok()) return got == 0 ? st : cut_off(s, st);
  std::string why;
  const size_t seal_bytes = s.channel() != nullptr ? kSealBytes : 0;
  const FrameHeader h = parse_header(header, max_payload_bytes, seal_bytes, &why);
  if (!why.empty()) {
    // A sealed link never resynchronises after a bad frame: break it here, as a failed
    // authentication does.
    if (seal_bytes != 0) s.shutdown();
    return Status::corrupt("frame: peer " + s.peer() + " sent " + why);
  }
  return h;
}

Status read_frame_payload(Socket& s, const FrameHeader& h, void* dst, int64_t timeout_ms) {
  SecureChannel* c = s.channel();
  if (c == nullptr) {
    if (h.payload_bytes == 0) return Status::ok();
    Status st = s.read_exact(dst, h.payload_bytes, timeout_ms);
    return st.is_ok() ? st : cut_off(s, st);
  }
  const size_t c_bytes = size_t{h.payload_bytes} + kSealBytes;
  COHORT_RETURN_IF_ERROR(read_grown(s, &c->recv_buffer(), c_bytes, timeout_ms));
  return open_sealed(s, *c, h, c_bytes, dst);
}

Result<Frame> read_frame(Socket& s, size_t max_payload_bytes, int64_t timeout_ms) {
  const int64_t start_ns = now_ns();
  COHORT_ASSIGN_OR_RETURN(const FrameHeader h,
                          read_frame_header(s, max_payload_bytes, timeout_ms, nullptr));
  Frame f;
  f.type = h.type;
  f.flags = h.flags;
  const int64_t left_ms = remaining_ms(timeout_ms, start_ns);
  if (s.channel() == nullptr) {
    // Grown as bytes arrive: a peer that claims a large frame and stalls costs only what
    // it sent.
    COHORT_RETURN_IF_ERROR(read_grown(s, &f.payload, h.payload_bytes, left_ms));
    return f;
  }
  // The ciphertext first (grown likewise), the plaintext buffer once it has all arrived.
  SecureChannel& c = *s.channel();
  const size_t c_bytes = size_t{h.payload_bytes} + kSealBytes;
  COHORT_RETURN_IF_ERROR(read_grown(s, &c.recv_buffer(), c_bytes, left_ms));
  f.payload.resize(h.payload_bytes);
  COHORT_RETURN_IF_ERROR(open_sealed(s, c, h, c_bytes, f.payload.data()));
  return f;
}

}  // namespace cohort::net
