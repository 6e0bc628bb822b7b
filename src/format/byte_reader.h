// Little-endian decoding from possibly unaligned bytes, and a bounds-checked cursor over
// untrusted input. Nothing here allocates; every read checks the bytes are there first.
#pragma once

#include <bit>
#include <cstdint>

namespace cohort::format {

inline uint16_t load_u16le(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (static_cast<uint32_t>(p[1]) << 8));
}
inline uint32_t load_u32le(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
inline uint64_t load_u64le(const uint8_t* p) {
  return static_cast<uint64_t>(load_u32le(p)) | (static_cast<uint64_t>(load_u32le(p + 4)) << 32);
}
inline float load_f32le(const uint8_t* p) { return std::bit_cast<float>(load_u32le(p)); }
inline double load_f64le(const uint8_t* p) { return std::bit_cast<double>(load_u64le(p)); }

// A read cursor over [data, data + size). A read that does not fit returns false and leaves
// the cursor where it was.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, uint64_t size) : data_(data), size_(size) {}

  uint64_t pos() const { return pos_; }
  uint64_t size() const { return size_; }
  uint64_t remaining() const { return size_ - pos_; }
  const uint8_t* cursor() const { return data_ + pos_; }

  bool skip(uint64_t n) {
    if (n > remaining()) return false;
    pos_ += n;
    return true;
  }
  // A view of the next n bytes; advances past them.
  bool bytes(uint64_t n, const uint8_t** out) {
    if (n > remaining()) return false;
    *out = data_ + pos_;
    pos_ += n;
    return true;
  }
  bool u8(uint8_t* v) {
    if (remaining() < 1) return false;
    *v = data_[pos_++];
    return true;
  }
  bool u16(uint16_t* v) { return fixed(2, v, load_u16le); }
  bool u32(uint32_t* v) { return fixed(4, v, load_u32le); }
  bool u64(uint64_t* v) { return fixed(8, v, load_u64le); }
  bool i32(int32_t* v) {
    uint32_t u = 0;
    if (!u32(&u)) return false;
    *v = static_cast<int32_t>(u);
    return true;
  }
  bool f32(float* v) { return fixed(4, v, load_f32le); }
  bool f64(double* v) { return fixed(8, v, load_f64le); }

 private:
  template <typename T, typename Load>
  bool fixed(uint64_t n, T* v, Load load) {
    if (remaining() < n) return false;
    *v = load(data_ + pos_);
    pos_ += n;
    return true;
  }

  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

}  // namespace cohort::format
