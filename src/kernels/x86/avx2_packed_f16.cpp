#include "kernels/registry.h"

namespace cohort::kernels {

// Not written yet: the type keeps its unpacked gemm.
void fill_avx2_packed_f16(KernelTable&) {}

}  // namespace cohort::kernels
