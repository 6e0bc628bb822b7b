#include <cstring>

#include "core/check.h"
#include "core/fp16.h"
#include "kernels/kernels.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

namespace cohort::kernels {

void store_q8_blocked_key(const float* key, int64_t head_dim, int64_t t, void* head) {
  COHORT_CHECK(head_dim % kQK == 0 && head_dim <= kKeyBlockMaxHeadDim);
  BlockQ8_0 blocks[kKeyBlockMaxHeadDim / kQK];
  quantize_row_q8_0(key, blocks, head_dim);
  auto* base = static_cast<uint8_t*>(head);
  for (int64_t g = 0; g < head_dim / kQK; ++g) {
    std::memcpy(base + q8_key_scale_offset(head_dim, t, g * kQK), &blocks[g].d, sizeof blocks[g].d);
    for (int64_t i = 0; i < kQK; ++i) {
      std::memcpy(base + q8_key_value_offset(head_dim, t, g * kQK + i), &blocks[g].qs[i], 1);
    }
  }
}

float q8_blocked_key(const AttentionArgs& a, int64_t t, int64_t kv_head, int64_t d) {
  const auto* head =
      static_cast<const uint8_t*>(a.k) + row_bytes(DType::kQ8_0, kv_head * a.k_head_stride);
  uint16_t scale;
  std::memcpy(&scale, head + q8_key_scale_offset(a.head_dim, t, d), sizeof scale);
  int8_t q;
  std::memcpy(&q, head + q8_key_value_offset(a.head_dim, t, d), 1);
  return fp16_to_f32(scale) * static_cast<float>(q);
}

}  // namespace cohort::kernels
