// PLACEHOLDER: replaced by the real implementation.
#include "kernels/registry.h"

namespace cohort::kernels {

void fill_avx2_basic(KernelTable& t) { (void)t; }

}  // namespace cohort::kernels
