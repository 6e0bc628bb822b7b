// GGUF v2/v3 model files: the metadata, the tensor directory and the tensor bytes, read
// over an mmap (or an in-memory buffer) with every count, offset and size validated against
// the file before use. Hostile or truncated files give a one-line Status naming the file and
// the problem ("gguf: model.gguf: tensor 'blk.0.attn_q.weight' data [..] runs past end of
// file (...)"), never a crash and never an allocation larger than a small multiple of the
// file's own size.
//
// Thread-safety: a GgufFile is immutable after open and safe to share between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/mapped_file.h"
#include "core/status.h"
#include "tensor/dtype.h"

namespace cohort::format {

// Arrays may nest this deep (an array of arrays is depth 2); deeper is an error.
inline constexpr uint32_t kGgufMaxArrayDepth = 8;

// Metadata value types, numbered as in the GGUF specification.
enum class GgufType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

const char* gguf_type_name(GgufType t);
// Bytes of one scalar value of type t; 0 for kString, kArray and unknown ids.
uint64_t gguf_scalar_bytes(GgufType t);

struct GgufValue;

// An array value. Scalar elements stay in the file as raw little-endian bytes (no copy);
// strings are views into the file; nested arrays are parsed recursively.
struct GgufArray {
  GgufType elem_type = GgufType::kU8;
  uint64_t count = 0;
  const uint8_t* raw = nullptr;           // scalar element types: count * elem size bytes
  std::vector<std::string_view> strings;  // elem_type == kString
  std::vector<GgufValue> arrays;          // elem_type == kArray

  // Element i converted, for scalar element types (nullopt when the type does not convert
  // losslessly or i is out of range).
  std::optional<int64_t> int_at(uint64_t i) const;
  std::optional<double> float_at(uint64_t i) const;
};

struct GgufValue {
  GgufType type = GgufType::kU8;
  uint64_t u = 0;                  // kU8, kU16, kU32, kU64, kBool (0/1)
  int64_t i = 0;                   // kI8, kI16, kI32, kI64
  double f = 0;                    // kF32, kF64
  std::string_view str;            // kString (a view into the file)
  std::shared_ptr<GgufArray> arr;  // kArray

  // Lossless conversions; nullopt when the type does not fit.
  std::optional<int64_t> as_int() const;
  std::optional<double> as_float() const;  // also accepts integer types
  std::optional<bool> as_bool() const;
  std::optional<std::string_view> as_string() const;
  const GgufArray* as_array() const { return type == GgufType::kArray ? arr.get() : nullptr; }
  // Short human-readable rendering ("[32000 strings]", "llama", "1e-05") for inspect.
  std::string to_display_string() const;
};

struct GgufKeyValue {
  std::string_view key;
  GgufValue value;
};

struct GgufTensorInfo {
  std::string_view name;
  DType type = DType::kF32;
  std::vector<int64_t> shape;  // GGUF order: shape[0] is the fastest-varying (row length)
  uint64_t offset = 0;         // from the start of the data section
  uint64_t bytes = 0;          // validated: elements / block * block_bytes
  int64_t n_elements() const;
};

class GgufFile {
 public:
  // Maps and parses path. The whole header, KV section and tensor directory are validated;
  // tensor byte ranges are checked to lie inside the file.
  // huge_pages: copy the file into huge-page memory instead of mapping it (MappedFile).
  static Result<GgufFile> open(const std::string& path, bool huge_pages = false);
  // Parses a GGUF image held in memory (llama2.c conversion, tests). name is used in errors.
  static Result<GgufFile> from_bytes(std::string name,
                                     std::shared_ptr<const std::vector<uint8_t>> bytes);

  GgufFile(GgufFile&&) noexcept = default;
  GgufFile& operator=(GgufFile&&) noexcept = default;

  const std::string& name() const { return name_; }
  uint32_t version() const { return version_; }
  uint64_t file_bytes() const { return size_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  // The whole file image (header, metadata, tensor directory, data).
  const uint8_t* raw_bytes() const { return data_; }
  // True when the image is a mapping of the file itself (not a copy, not memory): its pages
  // may be dropped (madvise) and are read again from the file when touched.
  bool file_backed() const { return mem_ == nullptr && !map_.copied(); }

  const std::vector<GgufKeyValue>& metadata() const { return kv_; }
  const GgufValue* find(std::string_view key) const;
  std::optional<int64_t> get_int(std::string_view key) const;
  std::optional<double> get_float(std::string_view key) const;
  std::optional<bool> get_bool(std::string_view key) const;
  std::optional<std::string_view> get_string(std::string_view key) const;
  const GgufArray* get_array(std::string_view key) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  const uint8_t* tensor_data(const GgufTensorInfo& t) const {
    return data_ + data_offset_ + t.offset;
  }

 private:
  GgufFile() = default;
  Status parse();

  std::string name_;
  MappedFile map_;                                   // set when opened from a path
  std::shared_ptr<const std::vector<uint8_t>> mem_;  // set when parsed from memory
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<GgufKeyValue> kv_;
  std::vector<GgufTensorInfo> tensors_;
  // Views into the file bytes, which stay put when the GgufFile moves.
  std::unordered_map<std::string_view, size_t> kv_index_;
  std::unordered_map<std::string_view, size_t> tensor_index_;
};

}  // namespace cohort::format
