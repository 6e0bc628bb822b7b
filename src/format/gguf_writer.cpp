// GGUF v3 writer: explicit little-endian encoding, one streaming pass.
#include "format/gguf_writer.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "core/check.h"

namespace cohort::format {
namespace {

constexpr uint32_t kVersion = 3;
constexpr uint32_t kTypeU32 = 4;
constexpr uint32_t kTypeString = 8;
constexpr uint32_t kTypeArray = 9;
constexpr uint32_t kTypeI32 = 5;
constexpr uint32_t kTypeF32 = 6;

void put_le(std::vector<uint8_t>& b, uint64_t v, int bytes) {
  for (int k = 0; k < bytes; ++k) b.push_back(static_cast<uint8_t>(v >> (8 * k)));
}
void put_u32(std::vector<uint8_t>& b, uint32_t v) { put_le(b, v, 4); }
void put_u64(std::vector<uint8_t>& b, uint64_t v) { put_le(b, v, 8); }
void put_str(std::vector<uint8_t>& b, std::string_view s) {
  put_u64(b, s.size());
  b.insert(b.end(), s.begin(), s.end());
}

uint64_t align_up(uint64_t n, uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

// Sinks: write() appends; ok() false stops the writing early.
struct VectorSink {
  std::vector<uint8_t>* out;
  void write(const uint8_t* p, size_t n) { out->insert(out->end(), p, p + n); }
  bool ok() const { return true; }
};

// Remembers the first error; later writes are skipped.
struct FileSink {
  std::FILE* f;
  int error = 0;
  void write(const uint8_t* p, size_t n) {
    if (error != 0 || n == 0) return;
    if (std::fwrite(p, 1, n, f) != n) error = errno != 0 ? errno : EIO;
  }
  bool ok() const { return error == 0; }
};

struct StreamSink {
  const GgufWriter::SinkFn& fn;
  Status status = Status::ok();
  void write(const uint8_t* p, size_t n) {
    if (status.is_ok() && n != 0) status = fn(p, n);
  }
  bool ok() const { return status.is_ok(); }
};

// Encodes v's payload (without its type id) as GGUF stores it.
void put_value(std::vector<uint8_t>& b, const GgufValue& v) {
  switch (v.type) {
    case GgufType::kString:
      put_str(b, v.str);
      return;
    case GgufType::kArray: {
      const GgufArray& a = *v.arr;
      put_u32(b, static_cast<uint32_t>(a.elem_type));
      put_u64(b, a.count);
      if (a.elem_type == GgufType::kString) {
        for (std::string_view s : a.strings) put_str(b, s);
      } else if (a.elem_type == GgufType::kArray) {
        for (const GgufValue& e : a.arrays) {
          put_u32(b, static_cast<uint32_t>(e.type));
          put_value(b, e);
        }
      } else {
        b.insert(b.end(), a.raw, a.raw + a.count * gguf_scalar_bytes(a.elem_type));
      }
      return;
    }
    case GgufType::kI8:
    case GgufType::kI16:
    case GgufType::kI32:
    case GgufType::kI64:
      put_le(b, static_cast<uint64_t>(v.i), static_cast<int>(gguf_scalar_bytes(v.type)));
      return;
    case GgufType::kF32:
      put_u32(b, std::bit_cast<uint32_t>(static_cast<float>(v.f)));
      return;
    case GgufType::kF64:
      put_u64(b, std::bit_cast<uint64_t>(v.f));
      return;
    default:  // unsigned and bool
      put_le(b, v.u, static_cast<int>(gguf_scalar_bytes(v.type)));
      return;
  }
}

}  // namespace

void GgufWriter::put(std::string key, uint32_t type_id, std::vector<uint8_t> payload) {
  // general.alignment set any way (set_u32, set_raw) decides the padding, when it is valid;
  // an invalid one (a bad-file test) is written as given and padded at the old alignment.
  if (key == "general.alignment" && type_id == kTypeU32 && payload.size() == 4) {
    uint32_t a = static_cast<uint32_t>(payload[0]) | static_cast<uint32_t>(payload[1]) << 8 |
                 static_cast<uint32_t>(payload[2]) << 16 | static_cast<uint32_t>(payload[3]) << 24;
    if (a != 0 && (a & (a - 1)) == 0) alignment_ = a;
  }
  for (Kv& kv : kv_) {
    if (kv.key == key) {
      kv.type_id = type_id;
      kv.payload = std::move(payload);
      return;
    }
  }
  kv_.push_back(Kv{std::move(key), type_id, std::move(payload)});
}

void GgufWriter::set_u8(std::string key, uint8_t v) { put(std::move(key), 0, {v}); }
void GgufWriter::set_i8(std::string key, int8_t v) {
  put(std::move(key), 1, {static_cast<uint8_t>(v)});
}
void GgufWriter::set_u16(std::string key, uint16_t v) {
  std::vector<uint8_t> b;
  put_le(b, v, 2);
  put(std::move(key), 2, std::move(b));
}
void GgufWriter::set_i16(std::string key, int16_t v) {
  std::vector<uint8_t> b;
  put_le(b, static_cast<uint16_t>(v), 2);
  put(std::move(key), 3, std::move(b));
}
void GgufWriter::set_u32(std::string key, uint32_t v) {
  std::vector<uint8_t> b;
  put_u32(b, v);
  put(std::move(key), kTypeU32, std::move(b));
}
void GgufWriter::set_i32(std::string key, int32_t v) {
  std::vector<uint8_t> b;
  put_u32(b, static_cast<uint32_t>(v));
  put(std::move(key), kTypeI32, std::move(b));
}
void GgufWriter::set_f32(std::string key, float v) {
  std::vector<uint8_t> b;
  put_u32(b, std::bit_cast<uint32_t>(v));
  put(std::move(key), kTypeF32, std::move(b));
}
void GgufWriter::set_bool(std::string key, bool v) {
  put(std::move(key), 7, {static_cast<uint8_t>(v ? 1 : 0)});
}
void GgufWriter::set_string(std::string key, std::string v) {
  std::vector<uint8_t> b;
  put_str(b, v);
  put(std::move(key), kTypeString, std::move(b));
}
void GgufWriter::set_u64(std::string key, uint64_t v) {
  std::vector<uint8_t> b;
  put_u64(b, v);
  put(std::move(key), 10, std::move(b));
}
void GgufWriter::set_i64(std::string key, int64_t v) {
  std::vector<uint8_t> b;
  put_u64(b, static_cast<uint64_t>(v));
  put(std::move(key), 11, std::move(b));
}
void GgufWriter::set_f64(std::string key, double v) {
  std::vector<uint8_t> b;
  put_u64(b, std::bit_cast<uint64_t>(v));
  put(std::move(key), 12, std::move(b));
}

void GgufWriter::set_strings(std::string key, std::vector<std::string> v) {
  std::vector<uint8_t> b;
  put_u32(b, kTypeString);
  put_u64(b, v.size());
  for (const std::string& s : v) put_str(b, s);
  put(std::move(key), kTypeArray, std::move(b));
}
void GgufWriter::set_f32s(std::string key, std::vector<float> v) {
  std::vector<uint8_t> b;
  b.reserve(12 + 4 * v.size());
  put_u32(b, kTypeF32);
  put_u64(b, v.size());
  for (float x : v) put_u32(b, std::bit_cast<uint32_t>(x));
  put(std::move(key), kTypeArray, std::move(b));
}
void GgufWriter::set_i32s(std::string key, std::vector<int32_t> v) {
  std::vector<uint8_t> b;
  b.reserve(12 + 4 * v.size());
  put_u32(b, kTypeI32);
  put_u64(b, v.size());
  for (int32_t x : v) put_u32(b, static_cast<uint32_t>(x));
  put(std::move(key), kTypeArray, std::move(b));
}
void GgufWriter::set_raw(std::string key, uint32_t type_id, std::vector<uint8_t> payload) {
  put(std::move(key), type_id, std::move(payload));
}

void GgufWriter::set_value(std::string key, const GgufValue& v) {
  std::vector<uint8_t> b;
  put_value(b, v);
  put(std::move(key), static_cast<uint32_t>(v.type), std::move(b));
}

void GgufWriter::set_alignment(uint32_t alignment) {
  COHORT_CHECK(alignment != 0 && (alignment & (alignment - 1)) == 0);
  set_u32("general.alignment", alignment);
}

void GgufWriter::add_tensor(std::string name, DType type, std::vector<int64_t> shape, FillFn fill) {
  COHORT_CHECK(fill != nullptr);
  COHORT_CHECK(!shape.empty() && shape.size() <= 4);
  for (const Tensor& t : tensors_) COHORT_CHECK_MSG(t.name != name, "duplicate tensor name");
  int64_t n = 1;
  for (int64_t d : shape) {
    COHORT_CHECK(d >= 0);
    COHORT_CHECK(!__builtin_mul_overflow(n, d, &n));
  }
  const DTypeInfo& info = dtype_info(type);
  COHORT_CHECK(shape[0] % info.block_elems == 0);
  uint64_t bytes =
      static_cast<uint64_t>(shape[0] == 0 ? 0 : n / shape[0]) * row_bytes(type, shape[0]);
  tensors_.push_back(
      Tensor{std::move(name), type, std::move(shape), bytes, std::move(fill), nullptr});
}

void GgufWriter::add_tensor_chunked(std::string name, DType type, std::vector<int64_t> shape,
                                    ChunkFn chunk) {
  COHORT_CHECK(chunk != nullptr);
  add_tensor(std::move(name), type, std::move(shape), [](uint8_t*, uint64_t) {});
  tensors_.back().fill = nullptr;
  tensors_.back().chunk = std::move(chunk);
}

void GgufWriter::add_tensor_bytes(std::string name, DType type, std::vector<int64_t> shape,
                                  std::vector<uint8_t> bytes) {
  auto data = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  add_tensor(std::move(name), type, std::move(shape), [data](uint8_t* dst, uint64_t n) {
    COHORT_CHECK_MSG(n == data->size(), "tensor bytes do not match its type and shape");
    if (n != 0) std::memcpy(dst, data->data(), n);
  });
}

std::vector<uint8_t> GgufWriter::header_bytes() const {
  std::vector<uint8_t> head;
  head.insert(head.end(), {'G', 'G', 'U', 'F'});
  put_u32(head, kVersion);
  put_u64(head, tensors_.size());
  put_u64(head, kv_.size());
  for (const Kv& kv : kv_) {
    put_str(head, kv.key);
    put_u32(head, kv.type_id);
    head.insert(head.end(), kv.payload.begin(), kv.payload.end());
  }
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    put_str(head, t.name);
    put_u32(head, static_cast<uint32_t>(t.shape.size()));
    for (int64_t d : t.shape) put_u64(head, static_cast<uint64_t>(d));
    put_u32(head, static_cast<uint32_t>(t.type));
    put_u64(head, offset);
    offset = align_up(offset + t.bytes, alignment_);
  }
  head.resize(align_up(head.size(), alignment_), 0);
  return head;
}

uint64_t GgufWriter::total_bytes() const {
  uint64_t n = header_bytes().size();
  for (const Tensor& t : tensors_) n += align_up(t.bytes, alignment_);
  return n;
}

template <typename Sink>
void GgufWriter::emit(Sink& sink) const {
  const std::vector<uint8_t> head = header_bytes();
  sink.write(head.data(), head.size());

  std::vector<uint8_t> buf;
  const std::vector<uint8_t> zeros(alignment_, 0);
  for (const Tensor& t : tensors_) {
    if (!sink.ok()) return;
    if (t.fill) {
      buf.resize(t.bytes);
      t.fill(buf.data(), t.bytes);
      sink.write(buf.data(), buf.size());
    } else {
      buf.resize(std::min<uint64_t>(t.bytes, kChunkBytes));
      for (uint64_t at = 0; at < t.bytes && sink.ok(); at += kChunkBytes) {
        const uint64_t n = std::min<uint64_t>(kChunkBytes, t.bytes - at);
        t.chunk(buf.data(), at, n);
        sink.write(buf.data(), n);
      }
    }
    sink.write(zeros.data(), align_up(t.bytes, alignment_) - t.bytes);
  }
}

Status GgufWriter::write_file(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    return Status::io_error("gguf: " + path + ": cannot create " + tmp + ": " +
                            std::strerror(errno));
  }
  FileSink sink{f};
  emit(sink);
  if (sink.error == 0 && std::fflush(f) != 0) sink.error = errno != 0 ? errno : EIO;
  if (std::fclose(f) != 0 && sink.error == 0) sink.error = errno != 0 ? errno : EIO;
  if (sink.error != 0) {
    std::remove(tmp.c_str());
    return Status::io_error("gguf: " + path + ": cannot write " + tmp + ": " +
                            std::strerror(sink.error));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    std::remove(tmp.c_str());
    return Status::io_error("gguf: " + path + ": cannot rename " + tmp + ": " + std::strerror(e));
  }
  return Status::ok();
}

Status GgufWriter::write_stream(const SinkFn& sink) const {
  StreamSink s{sink};
  emit(s);
  return s.status;
}

std::vector<uint8_t> GgufWriter::write_memory() const {
  std::vector<uint8_t> out;
  VectorSink sink{&out};
  emit(sink);
  return out;
}

}  // namespace cohort::format
