// Scalar machine probes: what plain code reaches (the AVX2 versions measure the peak).
#include "kernels/registry.h"

namespace cohort::kernels {
namespace {

float read_sum(const float* x, int64_t n) {
  // Four partial sums so the loop is bound by loads, not by one add chain.
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += x[i];
    s1 += x[i + 1];
    s2 += x[i + 2];
    s3 += x[i + 3];
  }
  for (; i < n; ++i) s0 += x[i];
  return (s0 + s1) + (s2 + s3);
}

double fma_loop(int64_t iters, float* sink) {
  constexpr int kChains = 8;
  float acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = static_cast<float>(c);
  // x -> 0.999 x + 0.001 converges to 1: bounded and never denormal.
  for (int64_t i = 0; i < iters; ++i) {
    for (float& a : acc) a = a * 0.999f + 0.001f;
  }
  float s = 0;
  for (float a : acc) s += a;
  *sink += s;
  return 2.0 * kChains * static_cast<double>(iters);
}

}  // namespace

void fill_ref_probes(KernelTable& t) {
  t.read_sum = read_sum;
  t.fma_loop = fma_loop;
}

}  // namespace cohort::kernels
