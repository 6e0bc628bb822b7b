// Helpers shared by the kernel tests: every kernel table this CPU can run, a type's entry
// points in one table, and reproducible random rows.
#pragma once

#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "kernels/kernels.h"
#include "tensor/dtype.h"

namespace cohort::kernels::testing {

// The tables available() returns, without the null entries of ISAs this CPU lacks.
inline std::vector<const KernelTable*> tables() {
  std::vector<const KernelTable*> out;
  for (const KernelTable* t : available()) {
    if (t != nullptr) out.push_back(t);
  }
  return out;
}

inline const TypeOps& ops_of(const KernelTable& k, DType t) {
  return k.types[static_cast<uint32_t>(t)];
}

// n normal values of the given scale, offset by a tenth of it (so sums are not near zero).
inline std::vector<float> random_floats(uint64_t seed, int64_t n, float scale = 1.0f) {
  Rng rng(seed);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = rng.normal() * scale + 0.1f * scale;
  return x;
}

}  // namespace cohort::kernels::testing
