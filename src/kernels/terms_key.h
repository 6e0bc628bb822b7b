// What a packed gemm's per-thread terms (scales and sums of tokens' activation blocks) were
// made from. Defined out of line (terms_key.cpp, compiled for the baseline ISA) so that the
// AVX2 and the AVX-512 kernel files share it without either compiling a copy of it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"

namespace cohort::kernels {

// fresh(g, t0, t1) says whether the terms must be made again for this call, and records the
// call when so. They are reused only when g.a_version is non-zero (kernels/kernels.h) and the
// call reads the same activations, width and tokens as the one that made them.
class TermsKey {
 public:
  TermsKey();
  bool fresh(const GemmArgs& g, int64_t t0, int64_t t1);

 private:
  uint64_t version_;
  const void* a_;
  size_t a_stride_;
  int64_t n_, t0_, t1_;
};

}  // namespace cohort::kernels
