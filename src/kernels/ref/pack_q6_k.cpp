#include <cstring>

#include "kernels/packed_layouts.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

// The file's 6-bit code of element e of a Q6_K block: in each half h of 128 elements, the
// four runs k of 32 take their low 4 bits from ql (runs 0, 1 low nibbles, runs 2, 3 high
// nibbles of the half's 64 bytes) and their top 2 bits from bits 2k of the half's 32 qh bytes.
int q6_k_code(const BlockQ6_K& x, int e) {
  const int h = e / 128, k = (e % 128) / 32, l = e % 32;
  const uint8_t low_byte = x.ql[64 * h + l + 32 * (k & 1)];
  const int low = k >= 2 ? low_byte >> 4 : low_byte & 0x0F;
  return low | (((x.qh[32 * h + l] >> (2 * k)) & 3) << 4);
}

// One panel of kRows rows: Q6_Kx8 (the scales in a table after d, in pairs of sub-blocks,
// row i at 16k + 2i + s) or Q6_Kx16 (each chunk's two sub-blocks' scales before its codes,
// row i at 16s + i); the codes' arrangement is the same.
template <int64_t kRows>
void pack_q6_k_panel(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  constexpr bool kWide = kRows == 16;
  constexpr size_t kSteps = kWide ? kQ6_Kx16StepsOffset : kQ6_Kx8StepsOffset;
  constexpr size_t kStep = kWide ? kQ6_Kx16StepBytes : kQ6_Kx8StepBytes;
  constexpr size_t kQl = kWide ? kQ6_Kx16QlInStep : 0;
  constexpr size_t kQh = kWide ? kQ6_Kx16QhInStep : kQ6_Kx8QhInStep;
  constexpr size_t kGroup = 4 * kRows;
  constexpr size_t kBlock = kSteps + 8 * kStep;
  auto* out = static_cast<uint8_t*>(dst);
  std::memset(out, 0, static_cast<size_t>(n / kQK_K) * kBlock);
  for (int64_t i = 0; i < n_rows; ++i) {
    const auto* row = reinterpret_cast<const BlockQ6_K*>(static_cast<const uint8_t*>(src) +
                                                         static_cast<size_t>(i) * src_stride);
    for (int64_t b = 0; b < n / kQK_K; ++b) {
      const BlockQ6_K& x = row[b];
      uint8_t* blk = out + b * kBlock;
      reinterpret_cast<uint16_t*>(blk)[i] = x.d;
      for (int j = 0; j < 16; ++j) {
        const size_t at = kWide ? kSteps + kStep * (j / 2) + 16 * (j % 2) + i
                                : kQ6_Kx8ScalesOffset + 16 * (j / 2) + 2 * i + j % 2;
        blk[at] = static_cast<uint8_t>(x.scales[j]);
      }
      for (int c = 0; c < 8; ++c) {
        uint8_t* step = blk + kSteps + kStep * c;
        for (int g = 0; g < 4; ++g) {
          for (int m = 0; m < 4; ++m) {
            const int lo = q6_k_code(x, 32 * c + 8 * g + m);
            const int hi = q6_k_code(x, 32 * c + 8 * g + 4 + m);
            step[kQl + kGroup * g + 4 * i + m] =
                static_cast<uint8_t>((lo & 0x0F) | ((hi & 0x0F) << 4));
            uint8_t& plane = step[kQh + kGroup * (g / 2) + 4 * i + m];
            plane = static_cast<uint8_t>(plane | (((lo >> 4) | ((hi >> 4) << 2)) << (4 * (g % 2))));
          }
        }
      }
    }
  }
}

}  // namespace

size_t q6_kx8_panel_bytes(int64_t n) { return static_cast<size_t>(n / kQK_K) * kQ6_Kx8BlockBytes; }

void pack_q6_kx8(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  pack_q6_k_panel<kQ6_KPanelRows>(src, src_stride, n_rows, n, dst);
}

size_t q6_kx16_panel_bytes(int64_t n) {
  return static_cast<size_t>(n / kQK_K) * kQ6_Kx16BlockBytes;
}

void pack_q6_kx16(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  pack_q6_k_panel<kQ6_Kx16PanelRows>(src, src_stride, n_rows, n, dst);
}

}  // namespace cohort::kernels
