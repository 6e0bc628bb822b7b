// The reference gemm: the reference vec_dot of each (row, token) pair. It defines every
// gemm's result (tests compare the SIMD tiles with it); only ref/*.cpp include this.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace cohort::kernels::ref {

template <float (*Dot)(int64_t, const void*, const void*)>
void gemm_pairs(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const auto* w = static_cast<const uint8_t*>(g.w);
  const auto* a = static_cast<const uint8_t*>(g.a);
  for (int64_t t = t0; t < t1; ++t) {
    for (int64_t r = r0; r < r1; ++r) {
      g.y[t * g.y_stride + r] = Dot(g.n, w + r * g.w_stride, a + t * g.a_stride);
    }
  }
}

}  // namespace cohort::kernels::ref
