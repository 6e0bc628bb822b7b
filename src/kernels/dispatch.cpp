#include <atomic>
#include <cstring>
#include <string>

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
  fill_avx2_packed_q4_q5(t);
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

// The avx2 table with the kernels vpdpbusd speeds up (same results, bit for bit), in its VEX
// form (avx2_vnni) or its EVEX form (avx2_vnni_evex).
KernelTable make_avx2_vnni(bool evex) {
  KernelTable t = make_avx2();
  t.isa = evex ? "avx2_vnni_evex" : "avx2_vnni";
  fill_vnni_packed_q4_q5(t, evex);
  fill_vnni_packed_q8_0(t, evex);
  fill_vnni_packed_k(t, evex);
  return t;
}

// Built only where it runs: best() asks for it first on every CPU. The VEX form where the
// CPU has it, else the EVEX form (the same instruction, 2 bytes longer).
const KernelTable* avx2_vnni_table() {
#if defined(__x86_64__)
  if (avx2_table() == nullptr) return nullptr;
  if (cpu_has_avx_vnni()) {
    static const KernelTable vex = make_avx2_vnni(false);
    return &vex;
  }
  if (cpu_has_avx512_vnni()) {
    static const KernelTable evex = make_avx2_vnni(true);
    return &evex;
  }
  return nullptr;
#else
  return nullptr;
#endif
}

// The avx2_vnni_evex table with the kernels that 512-bit registers speed up. Their packed
// layouts differ (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and Q2_K..Q6_K in panels of 16 rows), so weights
// packed for one table are not another's; every result is the same bits as the AVX2 tables'.
const KernelTable* avx512_vnni_table() {
#if defined(__x86_64__)
  if (avx2_table() == nullptr || !cpu_has_avx512_core_vnni()) return nullptr;
  static const KernelTable t = [] {
    KernelTable k = make_avx2_vnni(true);
    k.isa = "avx512_vnni";
    fill_avx512_packed_q4_q5(k);
    fill_avx512_packed_q4_q5_k(k);
    fill_avx512_packed_q8_0(k);
    fill_avx512_packed_q2_q3_q6_k(k);
    fill_avx512_packed_f16(k);
    fill_avx512_attention(k);
    fill_avx512_probes(k);
    return k;
  }();
  return &t;
#else
  return nullptr;
#endif
}

#if defined(__x86_64__)
// The register state the OS saves (XCR0's low half): bits 1, 2 for YMM, 5..7 for the AVX-512
// opmask and ZMM state. 0 where the OS does not enable XSAVE (CPUID 1 ECX bit 27, OSXSAVE),
// as then xgetbv itself would fault.
unsigned os_saved_state() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  return xcr0_lo;
}
#endif

// CPUID 0's vendor string ("GenuineIntel", "AuthenticAMD"); empty where there is none.
std::string cpu_vendor() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return {};
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  return vendor;
#else
  return {};
#endif
}

bool cpu_is_intel() { return cpu_vendor() == "GenuineIntel"; }

// Whether the CPU is AMD's of this family: CPUID 1's base family 0xF plus its extended family.
// 0x17: Zen 1, Zen+ and Zen 2; 0x19: Zen 3 and Zen 4; 0x1A: Zen 5.
bool cpu_is_amd_family(unsigned family) {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (cpu_vendor() != "AuthenticAMD" || !__get_cpuid(1, &a, &b, &c, &d)) return false;
  const unsigned base = (a >> 8) & 0xF, extended = (a >> 20) & 0xFF;
  return base == 0xF && base + extended == family;
#else
  (void)family;
  return false;
#endif
}

std::atomic<bool>& decode_pairs_setting() {
  static std::atomic<bool> on{cpu_is_intel()};
  return on;
}

std::atomic<bool>& decode_prefetch_setting() {
  static std::atomic<bool> on{cpu_is_intel() || cpu_is_amd_family(0x17) || cpu_is_amd_family(0x1A)};
  return on;
}

std::atomic<int64_t>& decode_prefetch_bytes_setting() {
  static std::atomic<int64_t> bytes{cpu_is_amd_family(0x1A) ? 4096 : 1024};
  return bytes;
}

std::atomic<bool>& decode_wide_setting() {
  static std::atomic<bool> on{cpu_is_amd_family(0x1A)};
  return on;
}

std::atomic<bool>& split_stealing_setting() {
  static std::atomic<bool> on{true};
  return on;
}

}  // namespace

bool split_stealing() { return split_stealing_setting().load(std::memory_order_relaxed); }

void set_split_stealing(bool on) { split_stealing_setting().store(on, std::memory_order_relaxed); }

bool decode_in_pairs() { return decode_pairs_setting().load(std::memory_order_relaxed); }

void set_decode_in_pairs(bool on) { decode_pairs_setting().store(on, std::memory_order_relaxed); }

bool decode_prefetch() { return decode_prefetch_setting().load(std::memory_order_relaxed); }

void set_decode_prefetch(bool on) {
  decode_prefetch_setting().store(on, std::memory_order_relaxed);
}

bool decode_wide() { return decode_wide_setting().load(std::memory_order_relaxed); }

void set_decode_wide(bool on) { decode_wide_setting().store(on, std::memory_order_relaxed); }

int64_t decode_prefetch_bytes() {
  return decode_prefetch_bytes_setting().load(std::memory_order_relaxed);
}

void set_decode_prefetch_bytes(int64_t bytes) {
  decode_prefetch_bytes_setting().store(bytes, std::memory_order_relaxed);
}

bool cpu_has_avx_vnni() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 1, &a, &b, &c, &d)) return false;
  return a & (1u << 4);
#else
  return false;
#endif
}

bool cpu_has_avx512_vnni() {
#if defined(__x86_64__)
  // CPUID leaf 7 EBX: AVX512VL (bit 31), ECX: AVX512_VNNI (bit 11); an EVEX instruction, even
  // on 256-bit registers, also needs the OS to save the opmask and ZMM state (XCR0 bits 5..7)
  // besides the YMM state (bits 1, 2).
  if ((os_saved_state() & 0xE6u) != 0xE6u) return false;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b & (1u << 31)) && (c & (1u << 11));
#else
  return false;
#endif
}

bool cpu_has_avx512_core_vnni() {
#if defined(__x86_64__)
  // CPUID leaf 7 EBX: AVX512F (bit 16), AVX512BW (bit 30).
  if (!cpu_has_avx512_vnni()) return false;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b & (1u << 16)) && (b & (1u << 30));
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
  const bool fma = c & (1u << 12), f16c = c & (1u << 29);
  if (!(fma && f16c) || (os_saved_state() & 6u) != 6u) return false;
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
  if (const KernelTable* z = avx512_vnni_table()) return *z;
  if (const KernelTable* v = avx2_vnni_table()) return *v;
  const KernelTable* a = avx2_table();
  return a ? *a : reference();
}

std::array<const KernelTable*, 4> available() {
  return {&reference(), avx2_table(), avx2_vnni_table(), avx512_vnni_table()};
}

const KernelTable* table_named(std::string_view isa, std::string* names) {
  for (const KernelTable* t : available()) {
    if (t == nullptr) continue;
    if (isa == t->isa) return t;
    if (names) *names += (names->empty() ? "" : ", ") + std::string(t->isa);
  }
  return nullptr;
}

}  // namespace cohort::kernels
