// What the AVX2 and AVX-512 attention kernels (x86/avx2_ops.cpp, x86/avx512_attention.cpp)
// share about the cache they read (kernels.h AttentionArgs): its element kinds, their bytes,
// and how a tile's rows are asked for ahead. Everything has internal linkage (an unnamed
// namespace), so each file compiles its own copy for its own ISA (see simd_avx512.h on why
// that matters).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/kernels.h"

namespace cohort::kernels {
namespace {

// The cache element types: a template parameter, so that each gets its own loops. kQ8Floats
// is no cache's type: a block of Q8_0 keys that the walk staged for a prompt's several quads,
// in the blocked Q8_0 layout (kernels.h q8_key_scale_offset) with each f16 scale and each int8
// a float (kQ8FloatsGroupFloats a 32-dim group), so that scoring it gives the bits scoring the
// block in place gives.
enum class Kv { kF32, kF16, kQ8, kQ8Floats };

constexpr int64_t kQ8Block = 32;       // values per Q8_0 block
constexpr int64_t kQ8BlockBytes = 34;  // f16 scale + 32 int8
constexpr int64_t kQ8FloatsGroupFloats = kKeyBlock * (1 + kQ8Block);

// A 32-dim group of a block of Q8_0 keys in place (kQ8: kernels.h q8_key_scale_offset) or
// staged (kQ8Floats): q8_group is the group that holds dim d, its kKeyBlock scales first;
// q8_group_values is dim d of positions j, j + 1, .. in it (int8 or floats). P: const char* to
// read a block, char* to write one (the walk staging kQ8Floats).
template <Kv kKind, class P>
inline P q8_group(P kblk, int64_t d) {
  static_assert(kKind == Kv::kQ8 || kKind == Kv::kQ8Floats);
  return kblk + d / kQ8Block * (kKind == Kv::kQ8 ? kQ8KeyGroupBytes : kQ8FloatsGroupFloats * 4);
}
template <Kv kKind, class P>
inline P q8_group_values(P group, int64_t d, int64_t j) {
  constexpr int64_t kScaleBytes = kKind == Kv::kQ8 ? 2 : 4, kValueBytes = kKind == Kv::kQ8 ? 1 : 4;
  return group + kKeyBlock * kScaleBytes + (d % kQ8Block * kKeyBlock + j) * kValueBytes;
}

// Bytes of n consecutive cache elements (for kQ8 n is a multiple of 32).
template <Kv kKind>
constexpr int64_t kv_bytes(int64_t n) {
  if constexpr (kKind == Kv::kF32) return n * 4;
  if constexpr (kKind == Kv::kF16) return n * 2;
  return n / kQ8Block * kQ8BlockBytes;
}

// While a tile's key row (krow) is staged: asks for the same position's value row (vrow,
// needed after the scores) into L1 and, where next_k is not null, the next tile's key row
// into L2, a cache line at a time (row_b bytes each). (The prefetches ride in the staging
// loop because GCC deletes loops that do nothing but prefetch.)
inline void ask_for_rows(const char* vrow, const char* next_k, int64_t row_b) {
  for (int64_t b = 0; b < row_b; b += 64) {
    _mm_prefetch(vrow + b, _MM_HINT_T0);
    if (next_k != nullptr) _mm_prefetch(next_k + b, _MM_HINT_T1);
  }
}

}  // namespace
}  // namespace cohort::kernels
