// The packers of Q4_0, Q4_1, Q5_0 and Q5_1 panels (kernels/packed_layouts.h Block32Panel):
// per block, the rows' scales, mins and fifth bits, then their codes' low 4 bits in the Q4_0x8
// group arrangement.
#include <cstring>
#include <type_traits>

#include "kernels/packed_layouts.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {

namespace {

// The file's block type of layout L.
template <class L>
using FileBlock = std::conditional_t<L::kFive, std::conditional_t<L::kMin, BlockQ5_1, BlockQ5_0>,
                                     std::conditional_t<L::kMin, BlockQ4_1, BlockQ4_0>>;

// The fifth bits of a file block as a uint32 (bit e: element e's); 0 for the 4-bit types.
template <class Block>
uint32_t fifth_bits(const Block& x) {
  if constexpr (requires { x.qh; }) {
    uint32_t h = 0;
    for (int k = 0; k < 4; ++k) h |= static_cast<uint32_t>(x.qh[k]) << (8 * k);
    return h;
  } else {
    return 0;
  }
}

}  // namespace

template <class L>
size_t block32_panel_bytes(int64_t n) {
  return static_cast<size_t>(n / kQK) * L::kBlockBytes;
}

template <class L>
void pack_block32_panel(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst) {
  using Block = FileBlock<L>;
  const int64_t nb = n / kQK;
  auto* out = static_cast<uint8_t*>(dst);
  std::memset(out, 0, static_cast<size_t>(nb) * L::kBlockBytes);
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* blk = out + b * L::kBlockBytes;
    auto* d = reinterpret_cast<uint16_t*>(blk);
    uint8_t* qs = blk + L::kCodesAt;
    for (int64_t i = 0; i < n_rows; ++i) {
      const auto* row = reinterpret_cast<const Block*>(static_cast<const uint8_t*>(src) +
                                                       static_cast<size_t>(i) * src_stride);
      const Block& x = row[b];
      d[i] = x.d;
      if constexpr (L::kMin) reinterpret_cast<uint16_t*>(blk + L::kMinsAt)[i] = x.m;
      // The file's code of element e (low 4 bits): low nibble of qs[e] (e < 16), else high of
      // qs[e - 16]; its fifth bit is bit e of the block's qh.
      auto code = [&](int e) { return e < 16 ? x.qs[e] & 0x0F : x.qs[e - 16] >> 4; };
      const uint32_t h = fifth_bits(x);
      for (int g = 0; g < 4; ++g) {
        for (int m = 0; m < 4; ++m) {
          const int lo = 8 * g + m, hi = 8 * g + 4 + m;
          qs[g * L::kGroupBytes + i * 4 + m] = static_cast<uint8_t>(code(lo) | (code(hi) << 4));
          if constexpr (L::kFive) {
            blk[L::kFifthAt + i * 4 + m] |=
                static_cast<uint8_t>(((h >> lo) & 1) << g | ((h >> hi) & 1) << (4 + g));
          }
        }
      }
    }
  }
}

template size_t block32_panel_bytes<Q4_0Panel<8>>(int64_t);
template size_t block32_panel_bytes<Q4_0Panel<16>>(int64_t);
template size_t block32_panel_bytes<Q4_1Panel<8>>(int64_t);
template size_t block32_panel_bytes<Q4_1Panel<16>>(int64_t);
template size_t block32_panel_bytes<Q5_0Panel<8>>(int64_t);
template size_t block32_panel_bytes<Q5_0Panel<16>>(int64_t);
template size_t block32_panel_bytes<Q5_1Panel<8>>(int64_t);
template size_t block32_panel_bytes<Q5_1Panel<16>>(int64_t);
template void pack_block32_panel<Q4_0Panel<8>>(const void*, size_t, int64_t, int64_t, void*);
template void pack_block32_panel<Q4_0Panel<16>>(const void*, size_t, int64_t, int64_t, void*);
template void pack_block32_panel<Q4_1Panel<8>>(const void*, size_t, int64_t, int64_t, void*);
template void pack_block32_panel<Q4_1Panel<16>>(const void*, size_t, int64_t, int64_t, void*);
template void pack_block32_panel<Q5_0Panel<8>>(const void*, size_t, int64_t, int64_t, void*);
template void pack_block32_panel<Q5_0Panel<16>>(const void*, size_t, int64_t, int64_t, void*);
template void pack_block32_panel<Q5_1Panel<8>>(const void*, size_t, int64_t, int64_t, void*);
template void pack_block32_panel<Q5_1Panel<16>>(const void*, size_t, int64_t, int64_t, void*);

}  // namespace cohort::kernels
