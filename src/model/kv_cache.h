// Keys and values of one sequence for the layers and KV heads one rank owns.
// Layout per layer: [n_kv_heads][n_ctx positions][head_dim], in F16 (default), F32 or Q8_0
// (blocks of 32 values: an f16 scale and 32 int8, about half the bytes of F16; a position's
// head_dim values are head_dim / 32 whole blocks, so head_dim must be a multiple of 32).
// Head-major, so that attention over one KV head streams a contiguous run of memory (at
// long contexts the cache is read from DRAM, where short strided rows cost latency).
// A latent cache (multi-head latent attention, deepseek2) holds keys only: one row per
// position of the normed latent and the roped shared key part (one "head" of row_elems
// values); v() is then null. It is F16 or F32 only.
//
// Blocked keys: in a cache with values whose head_dim is a multiple of
// kernels::kKeyBlockDimStep (16) and at most kernels::kKeyBlockMaxHeadDim, each KV head's
// keys are blocks of kernels::kKeyBlock (64) positions laid out dim by dim (kernels.h
// AttentionArgs::keys_blocked; a Q8_0 block's scales and int8 as kernels.h
// q8_key_scale_offset says), so that the attention kernels score a vector of positions at
// a time without sums across lanes, reading a block in address order; n_ctx is then rounded
// up to whole blocks. The values and latent caches keep positions as rows.
//
// The keys and the values each live in a HugePageBuffer (move-only): at depth a decode step
// streams the cache like the weights, and in 2 MiB pages its TLB misses are 512 times fewer
// (on the Zen 5 VM of stop 37, attention at depth 16384 took 0.89 of the time it took in 4
// KiB pages, against the same run's weight products).
#pragma once

#include <cstdint>

#include "core/huge_page_buffer.h"
#include "core/status.h"
#include "tensor/dtype.h"

namespace cohort::model {

class KvCache {
 public:
  // type is kF16, kF32 or kQ8_0 (head_dim a multiple of 32). Allocation failure of a huge
  // cache is reported, not thrown.
  static Result<KvCache> create(int64_t n_layers, int64_t n_ctx, int64_t n_kv_heads,
                                int64_t head_dim, DType type);
  // A cache of row_elems values per position and layer, with no values half; kF16 or kF32.
  static Result<KvCache> create_latent(int64_t n_layers, int64_t n_ctx, int64_t row_elems,
                                       DType type);

  int64_t n_ctx() const { return n_ctx_; }
  int64_t row_elems() const { return row_elems_; }  // n_kv_heads * head_dim
  int64_t head_dim() const { return head_dim_; }
  // Elements from one KV head's block to the next; positions within one are head_dim()
  // elements apart (keys: unless keys_blocked()).
  int64_t head_stride() const { return ctx_slots_ * head_dim_; }
  bool keys_blocked() const { return keys_blocked_; }
  DType type() const { return type_; }
  size_t bytes() const { return k_.size() + v_.size(); }
  // Bytes one position takes in every layer, keys and values (bytes() but for the slots a
  // blocked cache rounds its context up by).
  size_t bytes_per_position() const {
    return (has_values() ? 2 : 1) * static_cast<size_t>(n_layers_) * span_bytes(row_elems_);
  }
  // Bytes of n consecutive elements of one KV head (n a multiple of the type's block size).
  size_t span_bytes(int64_t n) const { return row_bytes(type_, n); }

  // Start of layer l's keys/values (KV head 0, position 0).
  void* k(int64_t layer) { return k_.data() + layer * layer_bytes_; }
  const void* k(int64_t layer) const { return k_.data() + layer * layer_bytes_; }
  void* v(int64_t layer) { return !has_values() ? nullptr : v_.data() + layer * layer_bytes_; }
  // Start of KV head kv_head's keys/values in layer l (position 0).
  const void* k_head(int64_t layer, int64_t kv_head) const {
    return k_.data() + layer * layer_bytes_ + span_bytes(kv_head * head_stride());
  }
  const void* v_head(int64_t layer, int64_t kv_head) const {
    return !has_values() ? nullptr
                         : v_.data() + layer * layer_bytes_ + span_bytes(kv_head * head_stride());
  }
  // Writes row_elems() floats (every KV head's head_dim values, head after head) for
  // position pos of layer l, converted to type(); v_row is ignored (may be null) in a
  // latent cache.
  void store(int64_t layer, int64_t pos, const float* k_row, const float* v_row);

 private:
  bool has_values() const { return v_.data() != nullptr; }
  static Result<KvCache> create_impl(int64_t n_layers, int64_t n_ctx, int64_t n_kv_heads,
                                     int64_t head_dim, DType type, bool with_values);

  int64_t n_layers_ = 0, n_ctx_ = 0, row_elems_ = 0, head_dim_ = 0;
  int64_t ctx_slots_ = 0;  // n_ctx rounded up to whole key blocks where keys are blocked
  bool keys_blocked_ = false;
  size_t layer_bytes_ = 0;
  DType type_ = DType::kF16;
  HugePageBuffer k_, v_;
};

}  // namespace cohort::model
