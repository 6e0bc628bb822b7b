#include <cstring>

#include "kernels/packed_layouts.h"

namespace cohort::kernels {

size_t f16x64_panel_bytes(int64_t n) { return static_cast<size_t>((n + 1) / 2) * kF16PairBytes; }

void pack_f16x64(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  auto* out = static_cast<uint8_t*>(dst);
  std::memset(out, 0, f16x64_panel_bytes(n));  // +0.0 in the padding rows and column
  for (int64_t i = 0; i < n_rows; ++i) {
    const auto* row = reinterpret_cast<const uint8_t*>(src) + static_cast<size_t>(i) * src_stride;
    const int64_t s = i / kF16SubRows, lane = i % kF16SubRows;
    for (int64_t k = 0; k < n; ++k) {
      // memcpy: the source rows need not be 2-byte aligned.
      std::memcpy(out + f16x64_offset(s, k) + lane * sizeof(uint16_t), row + k * sizeof(uint16_t),
                  sizeof(uint16_t));
    }
  }
}

}  // namespace cohort::kernels
