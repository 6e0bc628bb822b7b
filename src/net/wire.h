// Explicit little-endian field coding for message payloads (leveldb coding.h style): the
// byte layout of a message is what its code writes, field by field, on every host.
//
// WireWriter appends; WireReader checks every read against the bytes that remain and
// returns kCorrupt "wire: ..." instead of reading past the end, so it is safe on bytes
// from the network. Both are single-threaded value types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace cohort::net {

class WireWriter {
 public:
  WireWriter& u8(uint8_t v);
  WireWriter& u16(uint16_t v);
  WireWriter& u32(uint32_t v);
  WireWriter& u64(uint64_t v);
  WireWriter& i32(int32_t v);
  WireWriter& i64(int64_t v);
  WireWriter& f32(float v);   // IEEE-754 bits as u32
  WireWriter& f64(double v);  // IEEE-754 bits as u64
  // u32 byte length, then the bytes. A string longer than 4 GiB - 1 is a bug (checked).
  WireWriter& str(std::string_view s);
  // u64 byte length, then the bytes.
  WireWriter& bytes(const void* p, size_t n);
  // The bytes alone, no length (fixed-size fields such as nonces).
  WireWriter& raw(const void* p, size_t n);

  const std::vector<uint8_t>& data() const { return buf_; }
  size_t size() const { return buf_.size(); }
  // Moves the bytes out; the writer is empty afterwards.
  std::vector<uint8_t> take();

 private:
  std::vector<uint8_t> buf_;
};

// Reads from a borrowed buffer [p, p + n) that must outlive the reader. A failed read
// consumes nothing and leaves *out unchanged.
class WireReader {
 public:
  WireReader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  explicit WireReader(const std::vector<uint8_t>& v) : WireReader(v.data(), v.size()) {}

  Status u8(uint8_t* out);
  Status u16(uint16_t* out);
  Status u32(uint32_t* out);
  Status u64(uint64_t* out);
  Status i32(int32_t* out);
  Status i64(int64_t* out);
  Status f32(float* out);
  Status f64(double* out);
  // A length above max_len is kCorrupt before anything is allocated.
  Status str(std::string* out, size_t max_len);
  Status bytes(std::vector<uint8_t>* out, size_t max_len);
  Status raw(void* out, size_t n);

  size_t remaining() const { return n_ - pos_; }
  size_t offset() const { return pos_; }
  // kCorrupt when bytes are left over (a message longer than its type allows).
  Status expect_end() const;

 private:
  Status need(size_t k, const char* what) const;
  uint64_t le(size_t k);  // reads k <= 8 bytes at pos_, advances

  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
};

}  // namespace cohort::net
