#include <cstring>

#include "kernels/packed_layouts.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {

size_t q8_0x8_panel_bytes(int64_t n) { return static_cast<size_t>(n / kQK) * kQ8_0x8BlockBytes; }

void pack_q8_0x8(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  const int64_t nb = n / kQK;
  auto* out = static_cast<uint8_t*>(dst);
  std::memset(out, 0, q8_0x8_panel_bytes(n));
  // Block by block, so that each block of the panel is written whole while the rows' blocks
  // are read as 8 forward streams.
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* blk = out + b * kQ8_0x8BlockBytes;
    for (int64_t i = 0; i < n_rows; ++i) {
      const BlockQ8_0& x = reinterpret_cast<const BlockQ8_0*>(
          static_cast<const uint8_t*>(src) + static_cast<size_t>(i) * src_stride)[b];
      std::memcpy(blk + 2 * i, &x.d, sizeof(uint16_t));
      // Group g, row i: the row's codes 4g..4g+3, at bytes 4i..4i+3 of the group.
      for (int g = 0; g < kQ8_0x8Groups; ++g) {
        std::memcpy(blk + 16 + 32 * g + 4 * i, x.qs + 4 * g, 4);
      }
    }
  }
}

size_t q8_0x16_panel_bytes(int64_t n) { return static_cast<size_t>(n / kQK) * kQ8_0x16BlockBytes; }

void pack_q8_0x16(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  const int64_t nb = n / kQK;
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* blk = out + b * kQ8_0x16BlockBytes;
    std::memset(blk, 0, 32);
    std::memset(blk + 32, 0x80, kQ8_0x16BlockBytes - 32);
    for (int64_t i = 0; i < n_rows; ++i) {
      const BlockQ8_0& x = reinterpret_cast<const BlockQ8_0*>(
          static_cast<const uint8_t*>(src) + static_cast<size_t>(i) * src_stride)[b];
      std::memcpy(blk + 2 * i, &x.d, sizeof(uint16_t));
      for (int g = 0; g < 8; ++g) {
        for (int m = 0; m < 4; ++m) {
          blk[32 + 64 * g + 4 * i + m] = static_cast<uint8_t>(x.qs[4 * g + m]) ^ 0x80;
        }
      }
    }
  }
}

}  // namespace cohort::kernels
