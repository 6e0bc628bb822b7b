// The loop every packed AVX2 gemm shares (only kernels/x86 files include it): panels of a
// packed matrix, each in tiles of kTile tokens and one tile of the rest.
#pragma once

#include <cstdint>
#include <utility>

#include "kernels/kernels.h"

namespace cohort::kernels::avx2 {

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
