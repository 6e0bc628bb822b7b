#include "kernels/registry.h"

namespace cohort::kernels {
namespace {

KernelTable make_reference() {
  KernelTable t;
  t.isa = "ref";
  fill_ref_basic(t);
  fill_ref_k(t);
  fill_ref_ops(t);
  fill_ref_probes(t);
  return t;
}

KernelTable make_avx2() {
  KernelTable t = make_reference();
  t.isa = "avx2";
  fill_avx2_basic(t);
  fill_avx2_k(t);
  fill_avx2_gemm(t);
  fill_avx2_ops(t);
  fill_avx2_probes(t);
  return t;
}

const KernelTable* avx2_table() {
#if defined(__x86_64__)
  static const KernelTable t = make_avx2();
  return cpu_has_avx2_fma_f16c() ? &t : nullptr;
#else
  return nullptr;
#endif
}

}  // namespace

bool cpu_has_avx2_fma_f16c() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

const KernelTable& reference() {
  static const KernelTable t = make_reference();
  return t;
}

const KernelTable& best() {
  const KernelTable* a = avx2_table();
  return a ? *a : reference();
}

std::array<const KernelTable*, 2> available() { return {&reference(), avx2_table()}; }

}  // namespace cohort::kernels
