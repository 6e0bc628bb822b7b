#include "net/wire.h"

#include <bit>
#include <cstring>
#include <limits>

namespace cohort::net {
namespace {

void put_le(std::vector<uint8_t>* buf, uint64_t v, size_t k) {
  for (size_t i = 0; i < k; ++i) buf->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

}  // namespace

WireWriter& WireWriter::u8(uint8_t v) {
  buf_.push_back(v);
  return *this;
}
WireWriter& WireWriter::u16(uint16_t v) {
  put_le(&buf_, v, 2);
  return *this;
}
WireWriter& WireWriter::u32(uint32_t v) {
  put_le(&buf_, v, 4);
  return *this;
}
WireWriter& WireWriter::u64(uint64_t v) {
  put_le(&buf_, v, 8);
  return *this;
}
WireWriter& WireWriter::i32(int32_t v) { return u32(static_cast<uint32_t>(v)); }
WireWriter& WireWriter::i64(int64_t v) { return u64(static_cast<uint64_t>(v)); }
WireWriter& WireWriter::f32(float v) { return u32(std::bit_cast<uint32_t>(v)); }
WireWriter& WireWriter::f64(double v) { return u64(std::bit_cast<uint64_t>(v)); }

WireWriter& WireWriter::str(std::string_view s) {
  COHORT_CHECK(s.size() <= std::numeric_limits<uint32_t>::max());
  u32(static_cast<uint32_t>(s.size()));
  return raw(s.data(), s.size());
}

WireWriter& WireWriter::bytes(const void* p, size_t n) {
  u64(n);
  return raw(p, n);
}

WireWriter& WireWriter::raw(const void* p, size_t n) {
  if (n == 0) return *this;
  const auto* b = static_cast<const uint8_t*>(p);
  buf_.insert(buf_.end(), b, b + n);
  return *this;
}

std::vector<uint8_t> WireWriter::take() {
  std::vector<uint8_t> out = std::move(buf_);
  buf_.clear();
  return out;
}

Status WireReader::need(size_t k, const char* what) const {
  if (k <= remaining()) return Status::ok();
  return Status::corrupt("wire: truncated message: " + std::string(what) + " needs " +
                         std::to_string(k) + " bytes at offset " + std::to_string(pos_) + ", " +
                         std::to_string(remaining()) + " left");
}

uint64_t WireReader::le(size_t k) {
  uint64_t v = 0;
  for (size_t i = 0; i < k; ++i) v |= static_cast<uint64_t>(p_[pos_ + i]) << (8 * i);
  pos_ += k;
  return v;
}

Status WireReader::u8(uint8_t* out) {
  COHORT_RETURN_IF_ERROR(need(1, "u8"));
  *out = static_cast<uint8_t>(le(1));
  return Status::ok();
}
Status WireReader::u16(uint16_t* out) {
  COHORT_RETURN_IF_ERROR(need(2, "u16"));
  *out = static_cast<uint16_t>(le(2));
  return Status::ok();
}
Status WireReader::u32(uint32_t* out) {
  COHORT_RETURN_IF_ERROR(need(4, "u32"));
  *out = static_cast<uint32_t>(le(4));
  return Status::ok();
}
Status WireReader::u64(uint64_t* out) {
  COHORT_RETURN_IF_ERROR(need(8, "u64"));
  *out = le(8);
  return Status::ok();
}
Status WireReader::i32(int32_t* out) {
  COHORT_RETURN_IF_ERROR(need(4, "i32"));
  *out = static_cast<int32_t>(static_cast<uint32_t>(le(4)));
  return Status::ok();
}
Status WireReader::i64(int64_t* out) {
  COHORT_RETURN_IF_ERROR(need(8, "i64"));
  *out = static_cast<int64_t>(le(8));
  return Status::ok();
}
Status WireReader::f32(float* out) {
  COHORT_RETURN_IF_ERROR(need(4, "f32"));
  *out = std::bit_cast<float>(static_cast<uint32_t>(le(4)));
  return Status::ok();
}
Status WireReader::f64(double* out) {
  COHORT_RETURN_IF_ERROR(need(8, "f64"));
  *out = std::bit_cast<double>(le(8));
  return Status::ok();
}

Status WireReader::str(std::string* out, size_t max_len) {
  COHORT_RETURN_IF_ERROR(need(4, "string length"));
  const size_t start = pos_;
  const uint64_t len = le(4);
  if (len > max_len) {
    pos_ = start;
    return Status::corrupt("wire: string of " + std::to_string(len) + " bytes at offset " +
                           std::to_string(start) + " exceeds the limit of " +
                           std::to_string(max_len));
  }
  if (len > remaining()) {
    pos_ = start;
    return Status::corrupt("wire: truncated message: string of " + std::to_string(len) +
                           " bytes at offset " + std::to_string(start) + ", " +
                           std::to_string(remaining()) + " left");
  }
  out->assign(reinterpret_cast<const char*>(p_ + pos_), static_cast<size_t>(len));
  pos_ += static_cast<size_t>(len);
  return Status::ok();
}

Status WireReader::bytes(std::vector<uint8_t>* out, size_t max_len) {
  COHORT_RETURN_IF_ERROR(need(8, "byte-string length"));
  const size_t start = pos_;
  const uint64_t len = le(8);
  if (len > max_len) {
    pos_ = start;
    return Status::corrupt("wire: byte string of " + std::to_string(len) + " bytes at offset " +
                           std::to_string(start) + " exceeds the limit of " +
                           std::to_string(max_len));
  }
  if (len > remaining()) {
    pos_ = start;
    return Status::corrupt("wire: truncated message: byte string of " + std::to_string(len) +
                           " bytes at offset " + std::to_string(start) + ", " +
                           std::to_string(remaining()) + " left");
  }
  out->assign(p_ + pos_, p_ + pos_ + len);
  pos_ += static_cast<size_t>(len);
  return Status::ok();
}

Status WireReader::raw(void* out, size_t n) {
  COHORT_RETURN_IF_ERROR(need(n, "raw field"));
  if (n > 0) std::memcpy(out, p_ + pos_, n);
  pos_ += n;
  return Status::ok();
}

Status WireReader::expect_end() const {
  if (remaining() == 0) return Status::ok();
  return Status::corrupt("wire: " + std::to_string(remaining()) +
                         " unexpected trailing bytes at offset " + std::to_string(pos_));
}

}  // namespace cohort::net
