// Element types, numbered exactly as GGUF numbers them (ggml_type), and the block geometry
// of each: a row of n elements of type t occupies (n / block_elems) * block_bytes bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cohort {

enum class DType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,  // activations only (dot products against Q4_1/Q5_1)
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,  // activations only (dot products against the K-quants)
  kBF16 = 30,
};

// One past the largest GGUF type id we know of; tables indexed by DType use this size.
inline constexpr uint32_t kDTypeTableSize = 40;

struct DTypeInfo {
  std::string_view name;  // as llama.cpp prints it: "f32", "q4_0", "q4_K"
  uint32_t block_elems;   // elements per block (1 for plain floats)
  uint32_t block_bytes;   // bytes per block
  bool supported;         // we can store weights of this type and compute with them
};

// Info for a known type id; nullopt for ids we do not know (never index with those).
std::optional<DTypeInfo> dtype_info(uint32_t id);
const DTypeInfo& dtype_info(DType t);  // t must be a known enumerator
std::string_view dtype_name(DType t);
// Parses "f32", "q4_0", "Q4_K", ... (case-insensitive).
std::optional<DType> dtype_from_name(std::string_view name);

// Bytes of a row of n elements; n must be a multiple of the block size.
inline size_t row_bytes(DType t, int64_t n) {
  const DTypeInfo& i = dtype_info(t);
  return static_cast<size_t>(n / i.block_elems) * i.block_bytes;
}

// Weight types a model may be made of (what `cohort synth --type` accepts).
inline constexpr DType kWeightTypes[] = {
    DType::kF32,  DType::kF16,  DType::kBF16, DType::kQ8_0, DType::kQ4_0,
    DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kQ2_K, DType::kQ3_K,
    DType::kQ4_K, DType::kQ5_K, DType::kQ6_K,
};

}  // namespace cohort
