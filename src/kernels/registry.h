// Internal to kernels/: each implementation file fills its part of a table. dispatch.cpp
// calls the ref fillers for every table, then overlays the ISA fillers the CPU supports,
// so an ISA file only sets the entries it speeds up.
#pragma once

#include "kernels/kernels.h"

namespace cohort::kernels {

void fill_ref_basic(
    KernelTable& t);                // ref/vec_dot_basic.cpp: f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0
void fill_ref_k(KernelTable& t);    // ref/vec_dot_k.cpp: q2_K..q6_K
void fill_ref_ops(KernelTable& t);  // ref/ops.cpp: rmsnorm rope softmax silu_mul add attention
void fill_ref_probes(KernelTable& t);  // ref/probes.cpp: read_sum fma_loop

void fill_avx2_basic(KernelTable& t);         // x86/avx2_vec_dot_basic.cpp
void fill_avx2_k(KernelTable& t);             // x86/avx2_vec_dot_k.cpp
void fill_avx2_gemm(KernelTable& t);          // x86/avx2_gemm.cpp: f16 q4_0 q8_0
void fill_avx2_gemm_k(KernelTable& t);        // x86/avx2_gemm_k.cpp: q4_K q6_K
void fill_avx2_packed_q4_q5(KernelTable& t);  // x86/avx2_packed_q4_q5.cpp: q4_0 q4_1 q5_0 q5_1
void fill_avx2_packed_q8_0(KernelTable& t);   // x86/avx2_packed_q8_0.cpp
void fill_avx2_packed_f16(KernelTable& t);    // x86/avx2_packed_f16.cpp
void fill_avx2_packed_k(KernelTable& t);      // x86/avx2_packed_k.cpp: q2_K..q6_K
void fill_avx2_ops(KernelTable& t);           // x86/avx2_ops.cpp
void fill_avx2_probes(KernelTable& t);        // x86/avx2_probes.cpp

// The AVX2 one-token products of F16x64 panels of F16 and of BF16 (rows [r0, r1), token t of
// g), which the avx512_vnni table's F16 and BF16 gemms keep where they do not decode in 512-bit
// registers: decode is bound by memory, not by the instructions.
void avx2_packed_f16_decode(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t);
void avx2_packed_bf16_decode(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t);

// The avx2 table's entries that vpdpbusd speeds up, for a VNNI table: its VEX form (AVX-VNNI)
// or, with evex, its EVEX form on 256-bit registers (AVX512-VNNI + AVX512VL). The files stay
// compiled for AVX2: the one VNNI instruction is inline asm (avx2::dpbusd).
void fill_vnni_packed_q4_q5(KernelTable& t, bool evex);  // x86/avx2_packed_q4_q5.cpp
void fill_vnni_packed_q8_0(KernelTable& t, bool evex);   // x86/avx2_packed_q8_0.cpp
void fill_vnni_packed_k(KernelTable& t, bool evex);      // x86/avx2_packed_k.cpp: q4_K

// The avx512_vnni table's entries, on top of avx2_vnni_evex's: the only files compiled for
// AVX-512 (AVX512F, BW, VL and VNNI), each with its own packed layout.
void fill_avx512_packed_q4_q5(KernelTable& t);    // x86/avx512_packed_q4_q5.cpp: Q4_0x16 .. Q5_1x16
void fill_avx512_packed_q4_q5_k(KernelTable& t);  // x86/avx512_packed_q4_q5_k.cpp: Q4_Kx16, Q5_Kx16
void fill_avx512_packed_q8_0(KernelTable& t);     // x86/avx512_packed_q8_0.cpp: Q8_0x16
// x86/avx512_packed_q2_q3_q6_k.cpp: Q2_Kx16, Q3_Kx16, Q6_Kx16
void fill_avx512_packed_q2_q3_q6_k(KernelTable& t);
void fill_avx512_packed_f16(KernelTable& t);  // x86/avx512_packed_f16.cpp: F16x64, prompts
void fill_avx512_attention(KernelTable& t);   // x86/avx512_attention.cpp: head dims of 16s
void fill_avx512_probes(KernelTable& t);      // x86/avx512_probes.cpp: the 16-lane FMA peak

bool cpu_has_avx2_fma_f16c();
bool cpu_has_avx_vnni();          // the VEX-encoded AVX-VNNI (CPUID 7.1 EAX bit 4)
bool cpu_has_avx512_vnni();       // AVX512-VNNI and AVX512VL, with the OS saving the AVX-512 state
bool cpu_has_avx512_core_vnni();  // cpu_has_avx512_vnni() and AVX512F, AVX512BW

}  // namespace cohort::kernels
