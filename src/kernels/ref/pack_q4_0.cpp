#include <cstring>

#include "kernels/packed_layouts.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {

namespace {

// Packs n_rows <= kRows rows into one panel of kRows rows in the Q4_0x8 group arrangement
// (packed_layouts.h): per block, kRows f16 scales, then 4 groups of 4 * kRows bytes.
template <int64_t kRows>
void pack_q4_0_panel(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  constexpr size_t kScaleBytes = 2 * kRows, kGroupBytes = 4 * kRows;
  constexpr size_t kBlockBytes = kScaleBytes + 4 * kGroupBytes;
  const int64_t nb = n / kQK;
  auto* out = static_cast<uint8_t*>(dst);
  std::memset(out, 0, static_cast<size_t>(nb) * kBlockBytes);
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* blk = out + b * kBlockBytes;
    auto* d = reinterpret_cast<uint16_t*>(blk);
    uint8_t* qs = blk + kScaleBytes;
    for (int64_t i = 0; i < n_rows; ++i) {
      const auto* row = reinterpret_cast<const BlockQ4_0*>(static_cast<const uint8_t*>(src) +
                                                           static_cast<size_t>(i) * src_stride);
      const BlockQ4_0& x = row[b];
      d[i] = x.d;
      // The file's code of element e: low nibble of qs[e] (e < 16), else high of qs[e - 16].
      auto code = [&](int e) { return e < 16 ? x.qs[e] & 0x0F : x.qs[e - 16] >> 4; };
      for (int g = 0; g < 4; ++g) {
        for (int m = 0; m < 4; ++m) {
          qs[g * kGroupBytes + i * 4 + m] =
              static_cast<uint8_t>(code(8 * g + m) | (code(8 * g + 4 + m) << 4));
        }
      }
    }
  }
}

}  // namespace

size_t q4_0x8_panel_bytes(int64_t n) { return static_cast<size_t>(n / kQK) * kQ4_0x8BlockBytes; }

void pack_q4_0x8(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  pack_q4_0_panel<kQ4_0PanelRows>(src, src_stride, n_rows, n, dst);
}

size_t q4_0x16_panel_bytes(int64_t n) { return static_cast<size_t>(n / kQK) * kQ4_0x16BlockBytes; }

void pack_q4_0x16(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  pack_q4_0_panel<kQ4_0x16PanelRows>(src, src_stride, n_rows, n, dst);
}

}  // namespace cohort::kernels
