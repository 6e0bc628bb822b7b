// Length-prefixed frames over a Socket: a 12-byte header, then the payload.
//
//   offset 0  u32 magic    0x46484F43 (the bytes "COHF" on the wire)
//   offset 4  u16 type     message id; ids are stable and never renumbered.
//                          0xFF00..0xFFFF are reserved for net/ (the handshake).
//   offset 6  u16 flags    meaning defined per type; 0 when unused
//   offset 8  u32 payload_bytes
//
// All integers little-endian. A reader checks the magic and the length against its limit
// before it allocates anything, so a peer cannot make it reserve memory it never sends.
//
// Sealed links (Socket::channel() set by the handshake, secure_channel.h): the header stays
// in the clear, with payload_bytes counting the ciphertext (payload + kSealBytes); the
// payload travels as one secretstream message with the 12 header bytes as additional data.
// Limits apply to the plaintext payload, as on a plaintext link. A frame that fails
// authentication is kCorrupt and the socket is shut down: there is no plaintext fallback.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "net/socket.h"

namespace cohort::net {

inline constexpr uint32_t kFrameMagic = 0x46484F43;  // "COHF"
inline constexpr size_t kFrameHeaderBytes = 12;
inline constexpr uint32_t kMaxFrameBytes = 1u << 30;

struct Frame {
  uint16_t type = 0;
  uint16_t flags = 0;
  std::vector<uint8_t> payload;
};

struct FrameHeader {
  uint16_t type = 0;
  uint16_t flags = 0;
  uint32_t payload_bytes = 0;
};

// Header coding, for transports that move frames without a Socket (shared memory).
void encode_frame_header(uint8_t out[kFrameHeaderBytes], uint16_t type, uint16_t flags,
                         uint32_t payload_bytes);
// kCorrupt "frame: ..." on a bad magic or payload_bytes > min(max_payload_bytes,
// kMaxFrameBytes).
Result<FrameHeader> decode_frame_header(const uint8_t in[kFrameHeaderBytes],
                                        size_t max_payload_bytes);

// Sends one frame (header and payload in one gather write). bytes > kMaxFrameBytes is
// kInvalidArgument. On a sealed link a failed write shuts the socket down (the send stream
// has moved on). Same thread-safety as Socket::write_all (one writer at a time).
Status write_frame(Socket& s, uint16_t type, const void* payload, size_t bytes, int64_t timeout_ms,
                   uint16_t flags = 0);

// Reads one frame whose payload is at most max_payload_bytes (and kMaxFrameBytes).
// - bad magic or oversize: kCorrupt; the stream cannot be trusted, the caller disconnects.
// - kTimeout with no byte of the frame received: the stream is intact; call again.
// - kTimeout after part of a frame arrived: the stream is out of sync, so the socket is shut
//   down (later calls get kUnavailable).
// - sealed link: a bad header or a frame that fails authentication is kCorrupt and the
//   socket is shut down.
// Same thread-safety as Socket::read_exact (one reader at a time).
Result<Frame> read_frame(Socket& s, size_t max_payload_bytes, int64_t timeout_ms);

// read_frame in two steps, for a reader that puts the payload in its own buffer.
// read_frame_header: the next header, checked as read_frame does; payload_bytes is what
// read_frame_payload delivers (the plaintext size on a sealed link). *bytes_read (if not
// null) tells a timeout with nothing received (stream intact) from one mid-header (the
// socket is then shut down).
Result<FrameHeader> read_frame_header(Socket& s, size_t max_payload_bytes, int64_t timeout_ms,
                                      size_t* bytes_read);
// read_frame_payload: the payload of the frame h announced, exactly h.payload_bytes bytes
// into dst. Any failure shuts the socket down (the stream is out of step).
Status read_frame_payload(Socket& s, const FrameHeader& h, void* dst, int64_t timeout_ms);

}  // namespace cohort::net
