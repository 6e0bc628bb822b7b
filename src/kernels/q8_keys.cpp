#include <cstring>

#include "core/check.h"
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

}  // namespace cohort::kernels
