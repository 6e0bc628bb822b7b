// What the packed K-quant tiles (x86/avx2_packed_k.cpp, x86/avx512_packed_q4_q5_k.cpp,
// x86/avx512_packed_q2_q3_q6_k.cpp) take from a token's Q8_K activations besides their codes:
// per super-block its scale d and, in the form a layout's products want, sums of its codes.
// Internal linkage (an unnamed namespace), like every helper the x86/ files share: each file
// compiles its own copy with its own ISA flags (x86/simd_avx512.h says why that matters).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"
#include "kernels/terms_key.h"
#include "kernels/x86/grow_array.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

// The sums of a super-block's 8 sub-blocks of 32 codes, int16 (|sum| <= 32 * 128), in pairs
// for madd: Q4_K's and Q5_K's mins terms.
struct SumsOf32 {
  using Value = int16_t;
  static constexpr int kPerBlock = 8;
  static void make(const BlockQ8_K& a, Value* out) {
    for (int j = 0; j < 8; ++j) {
      out[j] = static_cast<Value>(a.bsums[2 * j] + a.bsums[2 * j + 1]);
    }
  }
};

// The file's 16 sums of 16 codes times kTimes, as V: unscaled int16 in pairs for madd (the AVX2
// tiles' offsets and Q2_K's mins terms), or int32 times -32 and -4, the offset term of Q6_K's and
// Q3_K's codes (q - 32, u - 4), which the AVX-512 tiles start each sub-block's dot from (a
// vpdpbusd chain then needs no zero to start from, and nothing taken off at its end).
template <typename V, int kTimes>
struct SumsOf16 {
  using Value = V;
  static constexpr int kPerBlock = 16;
  static void make(const BlockQ8_K& a, Value* out) {
    for (int j = 0; j < 16; ++j) out[j] = static_cast<Value>(a.bsums[j] * kTimes);
  }
};

// No sums: the AVX-512 Q2_K tiles read the file's bsums in place.
struct NoSums {
  using Value = int32_t;
  static constexpr int kPerBlock = 0;
  static void make(const BlockQ8_K&, Value*) {}
};

// The terms of a call's tokens: token t's super-block b at index (t - t0) * nb + b of d() and
// Sums::kPerBlock times that of sums() (null without sums). Per-thread storage grown to the
// largest call seen, no allocation once warm; make() keeps the last call's terms while a call
// reads the same activations (TermsKey).
template <class Sums>
class Q8KTerms {
 public:
  using Value = typename Sums::Value;

  // Terms of tokens [t0, t1) of g.
  void make(const GemmArgs& g, int64_t t0, int64_t t1) {
    if (!key_.fresh(g, t0, t1)) return;
    const int64_t nb = g.n / kQK_K;
    const size_t need = static_cast<size_t>((t1 - t0) * nb);
    float* d = d_.reserve(need);
    Value* sums = Sums::kPerBlock ? sums_.reserve(Sums::kPerBlock * need) : nullptr;
    for (int64_t t = t0; t < t1; ++t) {
      const auto* a =
          reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(g.a) + t * g.a_stride);
      for (int64_t b = 0; b < nb; ++b) {
        const size_t i = static_cast<size_t>((t - t0) * nb + b);
        d[i] = a[b].d;
        if constexpr (Sums::kPerBlock > 0) Sums::make(a[b], sums + Sums::kPerBlock * i);
      }
    }
  }

  const float* d() const { return d_.data(); }
  const Value* sums() const { return Sums::kPerBlock ? sums_.data() : nullptr; }

 private:
  GrowArray<float> d_;
  GrowArray<Value> sums_;
  TermsKey key_;
};

}  // namespace
}  // namespace cohort::kernels
