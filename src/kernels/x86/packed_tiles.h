// What every packed AVX2 gemm shares (only kernels/x86 files include it): the decode prefetch
// (which the read probe of avx2_probes.cpp takes too), and the loop over the panels of a
// packed matrix, each in tiles of kTile tokens and one tile of the rest.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <utility>

#include "kernels/kernels.h"

namespace cohort::kernels::avx2 {

// Decode streams each panel once, and a one-token tile does too little work per byte for the
// hardware prefetchers alone to keep memory busy: the packed gemms' one-token tiles ask for
// the bytes this far ahead of those they multiply. 1B Q4_0 tg64 on 2 threads went 37.8 ->
// 43-45 tok/s with it (stop 16). Stop 17 swept 1024 bytes into L1 against 4096, 6144 and 8192
// into L2 on all five packed types (1B, tg64, 2 threads, interleaved runs): every setting
// within 5% of the others, the order changing from round to round; kept as it was. Q6_K, which
// reads two places of a block at once, takes whole blocks instead (kQ6_KDecodeAhead).
constexpr int kDecodePrefetchBytes = 1024;

// Asks for `lines` 64-byte lines from kAhead bytes past p. A prefetch never faults, so p may
// be near the end of the weights.
template <int64_t kAhead = kDecodePrefetchBytes>
inline void prefetch_stream(const void* p, int lines) {
  for (int l = 0; l < lines; ++l) {
    _mm_prefetch(static_cast<const char*>(p) + kAhead + 64 * l, _MM_HINT_T0);
  }
}

// Calls tile.template operator()<T>(panel, r, t) for the panel holding rows r .. r +
// kPanelRows - 1 (r0 <= r < r1) and tokens t .. t + T - 1, over tokens [t0, t1): T = kTile
// while whole tiles fit, then T = the count left (1 .. kTile - 1), as its own instance.
template <int kPanelRows, int kTile, typename Tile>
void for_each_panel_tile(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1,
                         const Tile& tile) {
  for (int64_t r = r0; r < r1; r += kPanelRows) {
    const uint8_t* panel = static_cast<const uint8_t*>(g.w) + (r / kPanelRows) * g.w_stride;
    int64_t t = t0;
    for (; t + kTile <= t1; t += kTile) tile.template operator()<kTile>(panel, r, t);
    [&]<int... T>(std::integer_sequence<int, T...>) {
      ((t1 - t == T + 1 ? tile.template operator()<T + 1>(panel, r, t) : void()), ...);
    }
    (std::make_integer_sequence<int, kTile - 1>{});
  }
}

}  // namespace cohort::kernels::avx2
