// GgufValue / GgufArray accessors and their short renderings.
#include <cstdio>
#include <limits>
#include <string>

#include "format/byte_reader.h"
#include "format/gguf.h"

namespace cohort::format {
namespace {

// Whole element of an integer type decoded from raw little-endian bytes.
std::optional<int64_t> int_from_raw(GgufType t, const uint8_t* p) {
  switch (t) {
    case GgufType::kU8:
      return p[0];
    case GgufType::kI8:
      return static_cast<int8_t>(p[0]);
    case GgufType::kU16:
      return load_u16le(p);
    case GgufType::kI16:
      return static_cast<int16_t>(load_u16le(p));
    case GgufType::kU32:
      return load_u32le(p);
    case GgufType::kI32:
      return static_cast<int32_t>(load_u32le(p));
    case GgufType::kU64: {
      uint64_t v = load_u64le(p);
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return static_cast<int64_t>(v);
    }
    case GgufType::kI64:
      return static_cast<int64_t>(load_u64le(p));
    default:
      return std::nullopt;
  }
}

}  // namespace

uint64_t gguf_scalar_bytes(GgufType t) {
  // Also called with ids read from a file: any value outside the enum gives 0.
  switch (t) {
    case GgufType::kU8:
    case GgufType::kI8:
    case GgufType::kBool:
      return 1;
    case GgufType::kU16:
    case GgufType::kI16:
      return 2;
    case GgufType::kU32:
    case GgufType::kI32:
    case GgufType::kF32:
      return 4;
    case GgufType::kU64:
    case GgufType::kI64:
    case GgufType::kF64:
      return 8;
    default:
      return 0;
  }
}

namespace {

std::string format_double(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

// Quoted, escaped (one line) and cut to about 60 characters.
std::string quote(std::string_view s) {
  constexpr size_t kMax = 60;
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += s.size() > kMax ? "\"..." : "\"";
  return out;
}

}  // namespace

const char* gguf_type_name(GgufType t) {
  switch (t) {
    case GgufType::kU8:
      return "u8";
    case GgufType::kI8:
      return "i8";
    case GgufType::kU16:
      return "u16";
    case GgufType::kI16:
      return "i16";
    case GgufType::kU32:
      return "u32";
    case GgufType::kI32:
      return "i32";
    case GgufType::kF32:
      return "f32";
    case GgufType::kBool:
      return "bool";
    case GgufType::kString:
      return "string";
    case GgufType::kArray:
      return "array";
    case GgufType::kU64:
      return "u64";
    case GgufType::kI64:
      return "i64";
    case GgufType::kF64:
      return "f64";
  }
  return "?";
}

std::optional<int64_t> GgufArray::int_at(uint64_t i) const {
  uint64_t size = gguf_scalar_bytes(elem_type);
  if (raw == nullptr || size == 0 || i >= count) return std::nullopt;
  return int_from_raw(elem_type, raw + i * size);
}

std::optional<double> GgufArray::float_at(uint64_t i) const {
  uint64_t size = gguf_scalar_bytes(elem_type);
  if (raw == nullptr || size == 0 || i >= count) return std::nullopt;
  const uint8_t* p = raw + i * size;
  if (elem_type == GgufType::kF32) return load_f32le(p);
  if (elem_type == GgufType::kF64) return load_f64le(p);
  if (elem_type == GgufType::kU64) return static_cast<double>(load_u64le(p));
  std::optional<int64_t> v = int_from_raw(elem_type, p);
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

std::optional<int64_t> GgufValue::as_int() const {
  switch (type) {
    case GgufType::kU8:
    case GgufType::kU16:
    case GgufType::kU32:
    case GgufType::kU64:
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return static_cast<int64_t>(u);
    case GgufType::kI8:
    case GgufType::kI16:
    case GgufType::kI32:
    case GgufType::kI64:
      return i;
    default:
      return std::nullopt;
  }
}

std::optional<double> GgufValue::as_float() const {
  switch (type) {
    case GgufType::kF32:
    case GgufType::kF64:
      return f;
    case GgufType::kU8:
    case GgufType::kU16:
    case GgufType::kU32:
    case GgufType::kU64:
      return static_cast<double>(u);
    case GgufType::kI8:
    case GgufType::kI16:
    case GgufType::kI32:
    case GgufType::kI64:
      return static_cast<double>(i);
    default:
      return std::nullopt;
  }
}

std::optional<bool> GgufValue::as_bool() const {
  if (type != GgufType::kBool) return std::nullopt;
  return u != 0;
}

std::optional<std::string_view> GgufValue::as_string() const {
  if (type != GgufType::kString) return std::nullopt;
  return str;
}

std::string GgufValue::to_display_string() const {
  switch (type) {
    case GgufType::kU8:
    case GgufType::kU16:
    case GgufType::kU32:
    case GgufType::kU64:
      return std::to_string(u);
    case GgufType::kI8:
    case GgufType::kI16:
    case GgufType::kI32:
    case GgufType::kI64:
      return std::to_string(i);
    case GgufType::kF32:
    case GgufType::kF64:
      return format_double(f);
    case GgufType::kBool:
      return u ? "true" : "false";
    case GgufType::kString:
      return quote(str);
    case GgufType::kArray:
      break;
  }
  if (!arr) return "[]";
  const GgufArray& a = *arr;
  std::string out = "[" + std::to_string(a.count) + " ";
  if (a.elem_type == GgufType::kString) return out + "strings]";
  if (a.elem_type == GgufType::kArray) return out + "arrays]";
  out += gguf_type_name(a.elem_type);
  constexpr uint64_t kShown = 4;
  for (uint64_t k = 0; k < a.count && k < kShown; ++k) {
    out += k == 0 ? ": " : ", ";
    if (a.elem_type == GgufType::kBool) {
      out += a.raw[k] ? "true" : "false";
    } else if (a.elem_type == GgufType::kF32 || a.elem_type == GgufType::kF64) {
      out += format_double(a.float_at(k).value_or(0));
    } else if (a.elem_type == GgufType::kU64) {
      out += std::to_string(load_u64le(a.raw + k * 8));
    } else {
      out += std::to_string(a.int_at(k).value_or(0));
    }
  }
  if (a.count > kShown) out += ", ...";
  return out + "]";
}

int64_t GgufTensorInfo::n_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace cohort::format
