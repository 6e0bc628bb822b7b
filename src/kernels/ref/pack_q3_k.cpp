#include <cstring>

#include "kernels/packed_layouts.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

// Sub-block j's scale of a Q3_K block (6 bits, stored + 32): its low 4 bits in a nibble of
// bytes 0..7, its top 2 bits in bytes 8..11.
int scale_q3_k(const uint8_t* s, int j) {
  const int lo = j < 8 ? (s[j] & 0x0F) : (s[j - 8] >> 4);
  return (lo | (((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
}

// The code u = q + 4 in [0, 7] of element e of a Q3_K block: q's low 2 bits from qs, and
// q = low - 4 where its hmask bit is clear.
int code_q3_k(const BlockQ3_K& x, int e) {
  const int h = e / 128, j = (e % 128) / 32, l = e % 32;
  const int low = (x.qs[32 * h + l] >> (2 * j)) & 3;
  const int high = (x.hmask[l] >> (e / 32)) & 1;
  return low + 4 * high;
}

// One panel of kRows rows, Q3_Kx8 or Q3_Kx16: the scales where each layout keeps them (Q3_Kx8
// in a table after d, Q3_Kx16 at each chunk's start), then each chunk's code planes.
template <int64_t kRows>
void pack_q3_k_panel(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  constexpr bool kWide = kRows == 16;
  constexpr size_t kBlock = kWide ? kQ3_Kx16BlockBytes : kQ3_Kx8BlockBytes;
  constexpr size_t kQlInStep = kWide ? kQ3_Kx16QlInStep : 0;
  constexpr size_t kQhInStep = kWide ? kQ3_Kx16QhInStep : kQ3_Kx8QhInStep;
  constexpr size_t kPlane = 4 * kRows;  // one plane of ql: 4 bytes a row
  const int64_t nb = n / kQK_K;
  auto* out = static_cast<uint8_t*>(dst);
  std::memset(out, 0, static_cast<size_t>(nb) * kBlock);
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* blk = out + b * kBlock;
    for (int64_t i = 0; i < n_rows; ++i) {
      const auto* row = reinterpret_cast<const BlockQ3_K*>(static_cast<const uint8_t*>(src) +
                                                           static_cast<size_t>(i) * src_stride);
      const BlockQ3_K& x = row[b];
      std::memcpy(blk + 2 * i, &x.d, 2);
      for (int c = 0; c < 8; ++c) {
        uint8_t* step = blk + (kWide ? q3_kx16_step(c) : q3_kx8_step(c));
        for (int s = 0; s < 2; ++s) {
          const auto scale =
              static_cast<uint8_t>(static_cast<int8_t>(scale_q3_k(x.scales, 2 * c + s)));
          if constexpr (kWide) {
            step[kRows * s + i] = scale;
          } else {
            blk[kQ3_Kx8ScalesOffset + 16 * c + 2 * i + s] = scale;
          }
        }
        uint8_t* ql = step + kQlInStep;
        uint8_t* qh = step + kQhInStep;
        for (int g = 0; g < 4; ++g) {
          for (int h = 0; h < 2; ++h) {
            for (int m = 0; m < 4; ++m) {
              const int u = code_q3_k(x, 32 * c + 8 * g + 4 * h + m);
              ql[kPlane * (g / 2) + 4 * i + m] |=
                  static_cast<uint8_t>((u & 3) << (4 * (g % 2) + 2 * h));
              qh[4 * i + m] |= static_cast<uint8_t>((u >> 2) << (2 * g + h));
            }
          }
        }
      }
    }
  }
}

}  // namespace

size_t q3_kx8_panel_bytes(int64_t n) { return static_cast<size_t>(n / kQK_K) * kQ3_Kx8BlockBytes; }

void pack_q3_kx8(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  pack_q3_k_panel<8>(src, src_stride, n_rows, n, dst);
}

size_t q3_kx16_panel_bytes(int64_t n) {
  return static_cast<size_t>(n / kQK_K) * kQ3_Kx16BlockBytes;
}

void pack_q3_kx16(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  pack_q3_k_panel<kQ3_Kx16PanelRows>(src, src_stride, n_rows, n, dst);
}

}  // namespace cohort::kernels
