#include "model/kv_cache.h"

#include <cstring>
#include <new>

#include "core/fp16.h"

namespace cohort::model {

Result<KvCache> KvCache::create_latent(int64_t n_layers, int64_t n_ctx, int64_t row_elems,
                                       DType type) {
  // One "head" of row_elems values: rows of successive positions are contiguous.
  return create_impl(n_layers, n_ctx, 1, row_elems, type, false);
}

Result<KvCache> KvCache::create(int64_t n_layers, int64_t n_ctx, int64_t n_kv_heads,
                                int64_t head_dim, DType type) {
  return create_impl(n_layers, n_ctx, n_kv_heads, head_dim, type, true);
}

Result<KvCache> KvCache::create_impl(int64_t n_layers, int64_t n_ctx, int64_t n_kv_heads,
                                     int64_t head_dim, DType type, bool with_values) {
  if (type != DType::kF16 && type != DType::kF32) {
    return Status::invalid_argument("kv: cache type must be f16 or f32");
  }
  if (n_layers <= 0 || n_ctx <= 0 || n_kv_heads <= 0 || head_dim <= 0) {
    return Status::invalid_argument("kv: empty cache shape");
  }
  KvCache c;
  c.type_ = type;
  c.n_ctx_ = n_ctx;
  c.row_elems_ = n_kv_heads * head_dim;
  c.head_dim_ = head_dim;
  c.elem_bytes_ = type == DType::kF16 ? 2 : 4;
  c.layer_bytes_ = static_cast<size_t>(n_ctx) * c.row_elems_ * c.elem_bytes_;
  const size_t total = c.layer_bytes_ * n_layers;
  try {
    c.k_.resize(total);
    if (with_values) c.v_.resize(total);
  } catch (const std::bad_alloc&) {
    return Status::out_of_range("kv: cannot allocate " +
                                std::to_string((with_values ? 2 : 1) * total >> 20) +
                                " MiB of KV cache; lower the context with -c");
  }
  return c;
}

void KvCache::store(int64_t layer, int64_t pos, const float* k_row, const float* v_row) {
  const int64_t n_heads = row_elems_ / head_dim_;
  for (int64_t h = 0; h < n_heads; ++h) {
    const size_t off = layer * layer_bytes_ + (h * head_stride() + pos * head_dim_) * elem_bytes_;
    const float* kh = k_row + h * head_dim_;
    if (type_ == DType::kF32) {
      std::memcpy(k_.data() + off, kh, head_dim_ * 4);
      if (!v_.empty()) std::memcpy(v_.data() + off, v_row + h * head_dim_, head_dim_ * 4);
      continue;
    }
    auto* kd = reinterpret_cast<uint16_t*>(k_.data() + off);
    for (int64_t i = 0; i < head_dim_; ++i) kd[i] = f32_to_fp16(kh[i]);
    if (v_.empty()) continue;
    const float* vh = v_row + h * head_dim_;
    auto* vd = reinterpret_cast<uint16_t*>(v_.data() + off);
    for (int64_t i = 0; i < head_dim_; ++i) vd[i] = f32_to_fp16(vh[i]);
  }
}

}  // namespace cohort::model
