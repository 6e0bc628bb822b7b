// Builds GGUF v3 files: metadata of every type, then tensors, written in one streaming pass
// (a tensor's bytes are produced by a callback when its turn comes, so an 8B-shape synthetic
// model never has to sit in memory whole).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "format/gguf.h"
#include "tensor/dtype.h"

namespace cohort::format {

class GgufWriter {
 public:
  // Fills dst (exactly the tensor's bytes) with its data.
  using FillFn = std::function<void(uint8_t* dst, uint64_t bytes)>;
  // Fills dst with bytes [offset, offset + n) of the tensor. Called in order, in pieces of at
  // most kChunkBytes, so a tensor of any size streams through a small buffer.
  using ChunkFn = std::function<void(uint8_t* dst, uint64_t offset, uint64_t n)>;
  // Receives the file's bytes in order; an error stops the writing and is returned.
  using SinkFn = std::function<Status(const uint8_t* data, size_t n)>;
  static constexpr uint64_t kChunkBytes = 4u << 20;

  void set_u8(std::string key, uint8_t v);
  void set_i8(std::string key, int8_t v);
  void set_u16(std::string key, uint16_t v);
  void set_i16(std::string key, int16_t v);
  void set_u32(std::string key, uint32_t v);
  void set_i32(std::string key, int32_t v);
  void set_u64(std::string key, uint64_t v);
  void set_i64(std::string key, int64_t v);
  void set_f32(std::string key, float v);
  void set_f64(std::string key, double v);
  void set_bool(std::string key, bool v);
  void set_string(std::string key, std::string v);
  void set_strings(std::string key, std::vector<std::string> v);
  void set_f32s(std::string key, std::vector<float> v);
  void set_i32s(std::string key, std::vector<int32_t> v);
  // Any value already encoded as GGUF bytes (type id + payload), for nested arrays and
  // fuzz/bad-file tests.
  void set_raw(std::string key, uint32_t type_id, std::vector<uint8_t> payload);
  // A value as read from another file (any type, nested arrays included), re-encoded.
  void set_value(std::string key, const GgufValue& v);

  // general.alignment (default 32; a power of two). Setting the key with set_u32 has the
  // same effect; an invalid value given through set_raw is written as is (for bad-file tests).
  void set_alignment(uint32_t alignment);

  // shape in GGUF order (shape[0] = row length). bytes are computed from type and shape.
  void add_tensor(std::string name, DType type, std::vector<int64_t> shape, FillFn fill);
  // Convenience: copies bytes now (they must match the type and shape).
  void add_tensor_bytes(std::string name, DType type, std::vector<int64_t> shape,
                        std::vector<uint8_t> bytes);
  void add_tensor_chunked(std::string name, DType type, std::vector<int64_t> shape, ChunkFn chunk);

  // Size of the file the writer will produce.
  uint64_t total_bytes() const;
  Status write_file(const std::string& path) const;
  std::vector<uint8_t> write_memory() const;
  Status write_stream(const SinkFn& sink) const;

 private:
  struct Kv {
    std::string key;
    uint32_t type_id;
    std::vector<uint8_t> payload;
  };
  struct Tensor {
    std::string name;
    DType type;
    std::vector<int64_t> shape;
    uint64_t bytes;
    FillFn fill;    // either the whole tensor at once
    ChunkFn chunk;  // or piece by piece
  };
  std::vector<uint8_t> header_bytes() const;
  void put(std::string key, uint32_t type_id, std::vector<uint8_t> payload);
  template <typename Sink>
  void emit(Sink& sink) const;

  std::vector<Kv> kv_;
  std::vector<Tensor> tensors_;
  uint32_t alignment_ = 32;
};

}  // namespace cohort::format
