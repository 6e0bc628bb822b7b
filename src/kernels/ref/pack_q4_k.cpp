#include <cstring>
#include <type_traits>

#include "kernels/packed_layouts.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

// The 8 sub-block scales and mins of a Q4_K or Q5_K block, unpacked from their 12-byte 6-bit
// encoding: sub-blocks 0..3 keep the low 6 bits of bytes 0..3 (scales) and 4..7 (mins);
// sub-blocks 4..7 take their low 4 bits from the nibbles of bytes 8..11 and their top 2
// bits from the spare top bits of bytes 0..7.
void unpack_scales_mins(const uint8_t* s, uint8_t sc[8], uint8_t mn[8]) {
  for (int j = 0; j < 4; ++j) {
    sc[j] = s[j] & 63;
    mn[j] = s[j + 4] & 63;
    sc[j + 4] = static_cast<uint8_t>((s[j + 8] & 0x0F) | ((s[j] >> 6) << 4));
    mn[j + 4] = static_cast<uint8_t>((s[j + 8] >> 4) | ((s[j + 4] >> 6) << 4));
  }
}

// One panel of kRows rows, Q4_Kx8, Q4_Kx16, Q5_Kx8 or Q5_Kx16 (Block: the file's BlockQ4_K or
// BlockQ5_K): the scales in a table (row i of sub-block j at kRows j + i), then the codes'
// low 4 bits (sub-block j at kSubBytes j, after its high bits where Q5_K); mins in pairs.
template <int64_t kRows, class Block>
void pack_k_panel(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  constexpr bool kWide = kRows == 16;
  constexpr bool kFive = std::is_same_v<Block, BlockQ5_K>;
  constexpr size_t kMins = kWide ? kQ4_Kx16MinsOffset : kQ4_Kx8MinsOffset;
  constexpr size_t kScales = kWide ? kQ4_Kx16ScalesOffset : kQ4_Kx8ScalesOffset;
  using Subs = KQuantSubBlocks<kRows, kFive>;
  constexpr size_t kQs = Subs::kQsOffset, kSubBytes = Subs::kSubBytes;
  constexpr size_t kHighBytes = Subs::kCodesAt;  // a sub-block's fifth bits come first
  constexpr size_t kBlock = Subs::kBlockBytes;
  const int64_t nb = n / kQK_K;
  auto* out = static_cast<uint8_t*>(dst);
  std::memset(out, 0, static_cast<size_t>(nb) * kBlock);
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* blk = out + b * kBlock;
    auto* d = reinterpret_cast<uint16_t*>(blk);
    for (int64_t i = 0; i < n_rows; ++i) {
      const auto* row = reinterpret_cast<const Block*>(static_cast<const uint8_t*>(src) +
                                                       static_cast<size_t>(i) * src_stride);
      const Block& x = row[b];
      d[i] = x.d;
      d[kRows + i] = x.dmin;
      uint8_t sc[8], mn[8];
      unpack_scales_mins(x.scales, sc, mn);
      for (int j = 0; j < 8; ++j) {
        blk[kScales + kRows * j + i] = sc[j];
        blk[kMins + 2 * kRows * (j / 2) + 2 * i + j % 2] = mn[j];
      }
      // The file's code of element e: bytes 32h.. hold elements 64h.. in their low nibbles
      // and 64h + 32.. in their high nibbles.
      auto code = [&](int e) {
        const uint8_t byte = x.qs[32 * (e / 64) + e % 32];
        return (e % 64) < 32 ? byte & 0x0F : byte >> 4;
      };
      for (int j = 0; j < 8; ++j) {
        uint8_t* qs = blk + kQs + kSubBytes * j + kHighBytes;
        for (int g = 0; g < 4; ++g) {
          for (int m = 0; m < 4; ++m) {
            const int e = 32 * j + 8 * g + m;
            qs[4 * kRows * g + 4 * i + m] = static_cast<uint8_t>(code(e) | (code(e + 4) << 4));
          }
        }
        if constexpr (kFive) {
          // Q5_K's fifth bit of element e: bit e / 32 of qh[e % 32].
          auto high = [&](int e) { return (x.qh[e % 32] >> (e / 32)) & 1; };
          uint8_t* qh = blk + kQs + kSubBytes * j;
          for (int m = 0; m < 4; ++m) {
            int bits = 0;
            for (int g = 0; g < 4; ++g) {
              const int e = 32 * j + 8 * g + m;
              bits |= high(e) << g | high(e + 4) << (4 + g);
            }
            qh[4 * i + m] = static_cast<uint8_t>(bits);
          }
        }
      }
    }
  }
}

}  // namespace

size_t q4_kx8_panel_bytes(int64_t n) { return static_cast<size_t>(n / kQK_K) * kQ4_Kx8BlockBytes; }

void pack_q4_kx8(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  pack_k_panel<kQ4_KPanelRows, BlockQ4_K>(src, src_stride, n_rows, n, dst);
}

size_t q4_kx16_panel_bytes(int64_t n) {
  return static_cast<size_t>(n / kQK_K) * kQ4_Kx16BlockBytes;
}

void pack_q4_kx16(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  pack_k_panel<kQ4_Kx16PanelRows, BlockQ4_K>(src, src_stride, n_rows, n, dst);
}

size_t q5_kx8_panel_bytes(int64_t n) { return static_cast<size_t>(n / kQK_K) * kQ5_Kx8BlockBytes; }

void pack_q5_kx8(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  pack_k_panel<kQ4_KPanelRows, BlockQ5_K>(src, src_stride, n_rows, n, dst);
}

size_t q5_kx16_panel_bytes(int64_t n) {
  return static_cast<size_t>(n / kQK_K) * kQ5_Kx16BlockBytes;
}

void pack_q5_kx16(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  pack_k_panel<kQ4_Kx16PanelRows, BlockQ5_K>(src, src_stride, n_rows, n, dst);
}

}  // namespace cohort::kernels
