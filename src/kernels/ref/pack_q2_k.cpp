// The packers of Q2_K panels of 8 and 16 rows (kernels/packed_layouts.h Q2KPanel): each
// super-block's scales and mins as nibble pairs by row, then its codes in pairs of 2-bit planes,
// each group of 8 columns at one bit position.
#include <cstring>

#include "kernels/packed_layouts.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

// The 2-bit code of element e of a Q2_K block: in the file, element e of half h = e / 128 sits
// at bits 2j of qs[32h + e % 32], j = (e % 128) / 32.
int code_q2_k(const BlockQ2_K& x, int e) {
  const int h = e / 128, j = (e % 128) / 32, l = e % 32;
  return (x.qs[32 * h + l] >> (2 * j)) & 3;
}

// One panel of L::kRows rows (Q2_Kx8 or Q2_Kx16).
template <class L>
void pack_q2_k_panel(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  constexpr int64_t kRows = L::kRows;
  const int64_t nb = n / kQK_K;
  auto* out = static_cast<uint8_t*>(dst);
  std::memset(out, 0, static_cast<size_t>(nb) * L::kBlockBytes);
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* blk = out + b * L::kBlockBytes;
    for (int64_t i = 0; i < n_rows; ++i) {
      const auto* row = reinterpret_cast<const BlockQ2_K*>(static_cast<const uint8_t*>(src) +
                                                           static_cast<size_t>(i) * src_stride);
      const BlockQ2_K& x = row[b];
      std::memcpy(blk + 2 * i, &x.d, 2);
      std::memcpy(blk + 2 * kRows + 2 * i, &x.dmin, 2);
      for (int k = 0; k < 8; ++k) {
        // The file's byte j: scale of sub-block j in its low nibble, min in its high one.
        const uint8_t a = x.scales[2 * k], c = x.scales[2 * k + 1];
        blk[L::kMinsOffset + kRows * k + i] = static_cast<uint8_t>((a >> 4) | (c & 0xF0));
        blk[L::kScalesOffset + kRows * k + i] =
            static_cast<uint8_t>((a & 0x0F) | ((c & 0x0F) << 4));
      }
      for (int c = 0; c < 8; ++c) {
        for (int g = 0; g < 4; ++g) {
          for (int h = 0; h < 2; ++h) {
            uint8_t* plane = blk + L::plane_offset(c, h);
            for (int m = 0; m < 4; ++m) {
              const int q = code_q2_k(x, 32 * c + 8 * g + 4 * h + m);
              plane[4 * i + m] |= static_cast<uint8_t>(q << (2 * g));
            }
          }
        }
      }
    }
  }
}

}  // namespace

size_t q2_kx8_panel_bytes(int64_t n) {
  return static_cast<size_t>(n / kQK_K) * Q2KPanel<8>::kBlockBytes;
}

void pack_q2_kx8(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  pack_q2_k_panel<Q2KPanel<8>>(src, src_stride, n_rows, n, dst);
}

size_t q2_kx16_panel_bytes(int64_t n) {
  return static_cast<size_t>(n / kQK_K) * Q2KPanel<16>::kBlockBytes;
}

void pack_q2_kx16(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  pack_q2_k_panel<Q2KPanel<16>>(src, src_stride, n_rows, n, dst);
}

}  // namespace cohort::kernels
