#include "model/kv_cache.h"

#include <cstring>
#include <utility>

#include "core/fp16.h"
#include "kernels/kernels.h"
#include "tensor/quantize.h"

namespace cohort::model {

Result<KvCache> KvCache::create_latent(int64_t n_layers, int64_t n_ctx, int64_t row_elems,
                                       DType type) {
  // One "head" of row_elems values: rows of successive positions are contiguous.
  if (type == DType::kQ8_0) {
    return Status::unsupported(
        "kv: the latent cache of multi-head latent attention (deepseek2) has no q8_0 form; "
        "use an f16 or f32 cache (--kv-type)");
  }
  return create_impl(n_layers, n_ctx, 1, row_elems, type, false);
}

Result<KvCache> KvCache::create(int64_t n_layers, int64_t n_ctx, int64_t n_kv_heads,
                                int64_t head_dim, DType type) {
  return create_impl(n_layers, n_ctx, n_kv_heads, head_dim, type, true);
}

Result<KvCache> KvCache::create_impl(int64_t n_layers, int64_t n_ctx, int64_t n_kv_heads,
                                     int64_t head_dim, DType type, bool with_values) {
  if (type != DType::kF16 && type != DType::kF32 && type != DType::kQ8_0) {
    return Status::invalid_argument("kv: cache type must be f16, f32 or q8_0");
  }
  if (n_layers <= 0 || n_ctx <= 0 || n_kv_heads <= 0 || head_dim <= 0) {
    return Status::invalid_argument("kv: empty cache shape");
  }
  if (type == DType::kQ8_0 && head_dim % dtype_info(type).block_elems != 0) {
    return Status::unsupported("kv: a q8_0 cache needs a head dimension that is a multiple of " +
                               std::to_string(dtype_info(type).block_elems) + "; this one is " +
                               std::to_string(head_dim) + " (use --kv-type f16)");
  }
  KvCache c;
  c.type_ = type;
  c.n_layers_ = n_layers;
  c.n_ctx_ = n_ctx;
  c.row_elems_ = n_kv_heads * head_dim;
  c.head_dim_ = head_dim;
  c.keys_blocked_ = with_values && head_dim % kernels::kKeyBlockDimStep == 0 &&
                    head_dim <= kernels::kKeyBlockMaxHeadDim;
  c.ctx_slots_ = c.keys_blocked_
                     ? (n_ctx + kernels::kKeyBlock - 1) / kernels::kKeyBlock * kernels::kKeyBlock
                     : n_ctx;
  c.layer_bytes_ = row_bytes(type, c.ctx_slots_ * c.row_elems_);
  const size_t total = c.layer_bytes_ * n_layers;
  // Anonymous memory in huge pages where the system gives them: zero until written, and only
  // the positions written are ever touched.
  for (HugePageBuffer* b : {&c.k_, &c.v_}) {
    if (b == &c.v_ && !with_values) break;
    Result<HugePageBuffer> buffer = HugePageBuffer::allocate(total);
    if (!buffer.is_ok()) {
      return Status::out_of_range("kv: cannot allocate " +
                                  std::to_string((with_values ? 2 : 1) * total >> 20) +
                                  " MiB of KV cache; lower the context with -c");
    }
    *b = std::move(buffer).value();
  }
  return c;
}

void KvCache::store(int64_t layer, int64_t pos, const float* k_row, const float* v_row) {
  const int64_t n_heads = row_elems_ / head_dim_;
  for (int64_t h = 0; h < n_heads; ++h) {
    const size_t off = layer * layer_bytes_ + span_bytes(h * head_stride() + pos * head_dim_);
    const float* kh = k_row + h * head_dim_;
    const float* vh = has_values() ? v_row + h * head_dim_ : nullptr;
    if (type_ == DType::kQ8_0) {
      if (keys_blocked_) {
        kernels::store_q8_blocked_key(
            kh, head_dim_, pos, k_.data() + layer * layer_bytes_ + span_bytes(h * head_stride()));
      } else {
        quantize_row_q8_0(kh, k_.data() + off, head_dim_);
      }
      if (vh) quantize_row_q8_0(vh, v_.data() + off, head_dim_);
      continue;
    }
    // The key: a row, or blocked (key (pos, d) at block pos / kKeyBlock, dim d, lane pos %
    // kKeyBlock: kernels.h key_index), i.e. head_dim values `step` elements apart.
    size_t k_off = off;
    int64_t step = 1;
    if (keys_blocked_) {
      constexpr int64_t kb = kernels::kKeyBlock;
      k_off = layer * layer_bytes_ +
              span_bytes(h * head_stride() + pos / kb * kb * head_dim_ + pos % kb);
      step = kb;
    }
    if (type_ == DType::kF32) {
      auto* kd = reinterpret_cast<float*>(k_.data() + k_off);
      for (int64_t d = 0; d < head_dim_; ++d) kd[d * step] = kh[d];
      if (vh) std::memcpy(v_.data() + off, vh, head_dim_ * 4);
      continue;
    }
    auto* kd = reinterpret_cast<uint16_t*>(k_.data() + k_off);
    for (int64_t d = 0; d < head_dim_; ++d) kd[d * step] = f32_to_fp16(kh[d]);
    if (!vh) continue;
    auto* vd = reinterpret_cast<uint16_t*>(v_.data() + off);
    for (int64_t i = 0; i < head_dim_; ++i) vd[i] = f32_to_fp16(vh[i]);
  }
}

}  // namespace cohort::model
