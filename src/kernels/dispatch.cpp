#include "kernels/registry.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

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
  fill_avx2_gemm_k(t);
  fill_avx2_packed_q4_0(t);
  fill_avx2_packed_q8_0(t);
  fill_avx2_packed_f16(t);
  fill_avx2_packed_k(t);
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

// The avx2 table with the kernels AVX-VNNI speeds up (same results, bit for bit).
KernelTable make_avx2_vnni() {
  KernelTable t = make_avx2();
  t.isa = "avx2_vnni";
  fill_avxvnni_packed_q4_0(t);
  fill_avxvnni_packed_q8_0(t);
  fill_avxvnni_packed_k(t);
  return t;
}

// Built only where it runs: best() asks for it first on every CPU.
const KernelTable* avx2_vnni_table() {
#if defined(__x86_64__)
  if (avx2_table() == nullptr || !cpu_has_avx_vnni()) return nullptr;
  static const KernelTable t = make_avx2_vnni();
  return &t;
#else
  return nullptr;
#endif
}

}  // namespace

bool cpu_has_avx_vnni() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 1, &a, &b, &c, &d)) return false;
  return a & (1u << 4);
#else
  return false;
#endif
}

bool cpu_has_avx2_fma_f16c() {
#if defined(__x86_64__)
  // CPUID leaf 1 ECX: FMA (bit 12), OSXSAVE (27), F16C (29); leaf 7 EBX: AVX2 (bit 5); and
  // the OS must save the YMM state (XCR0 bits 1 and 2). Read directly: not every compiler's
  // __builtin_cpu_supports knows "f16c".
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool fma = c & (1u << 12), osxsave = c & (1u << 27), f16c = c & (1u << 29);
  if (!(fma && osxsave && f16c)) return false;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & 6u) != 6u) return false;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return b & (1u << 5);
#else
  return false;
#endif
}

const KernelTable& reference() {
  static const KernelTable t = make_reference();
  return t;
}

const KernelTable& best() {
  if (const KernelTable* v = avx2_vnni_table()) return *v;
  const KernelTable* a = avx2_table();
  return a ? *a : reference();
}

std::array<const KernelTable*, 3> available() {
  return {&reference(), avx2_table(), avx2_vnni_table()};
}

}  // namespace cohort::kernels
