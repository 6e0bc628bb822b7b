// Rope scaling written from the YaRN paper's definitions in double precision, independent
// of model/rope.cpp, for the tests that check the engine against it (model/rope.h states
// the contract both follow).
#pragma once

#include <algorithm>
#include <cmath>
#include <numbers>

#include "model/hparams.h"
#include "model/synth.h"

namespace cohort::testing {

// The rate of pair i whose unscaled rate is w (base^(-2i / n_rot), over a rope_freqs
// factor). YaRN: wavelength 2 pi / w turns L / (2 pi / w) times over the original context
// L; pairs turning more than beta_fast times keep w, fewer than beta_slow get w / s, and
// those between blend linearly over the integer-rounded range of pair indices.
inline double reference_rope_rate(const model::HParams& hp, int64_t i, double w) {
  if (hp.rope_scaling == model::RopeScaling::kLinear) return w / hp.rope_factor;
  if (hp.rope_scaling != model::RopeScaling::kYarn) return w;
  const double n = double(hp.n_rot), base = hp.rope_base, L = double(hp.rope_orig_ctx);
  // The d solving L / (2 pi base^(2d / n)) = beta.
  auto dim_for = [&](double beta) {
    return n / 2 * std::log(L / (2 * std::numbers::pi * beta)) / std::log(base);
  };
  const double low = std::max(0.0, std::floor(dim_for(hp.yarn_beta_fast)));
  const double high = std::min(n - 1, std::ceil(dim_for(hp.yarn_beta_slow)));
  const double keep = std::clamp(1 - (double(i) - low) / std::max(0.001, high - low), 0.0, 1.0);
  return w * keep + (w / hp.rope_factor) * (1 - keep);
}

// YaRN's magnitude of cos and sin: 1 + 0.1 ln s, but 1 in deepseek2 (its softmax takes it).
inline double reference_rope_magnitude(const model::HParams& hp) {
  if (hp.rope_scaling != model::RopeScaling::kYarn || hp.is_mla()) return 1;
  return 1 + 0.1 * std::log(double(hp.rope_factor));
}

// The softmax scale: 1 / sqrt(head_dim), for deepseek2 under YaRN times
// (1 + log_mul ln s)^2.
inline double reference_attention_scale(const model::HParams& hp) {
  double m = 1;
  if (hp.rope_scaling == model::RopeScaling::kYarn && hp.is_mla())
    m = 1 + double(hp.yarn_log_mul) * std::log(double(hp.rope_factor));
  return m * m / std::sqrt(double(hp.head_dim));
}

// The YaRN setting of the forward tests: factor 8 over 4096 original positions, where 8
// roped dims have pairs 0-1 keeping their rate, 2 blending and 3 interpolated (16 dims:
// 0-2, 3-5, 6-7); deepseek2 also gets V3's log multiplier 0.1.
inline void use_test_yarn(model::SynthConfig& c) {
  c.rope_scaling = "yarn";
  c.rope_factor = 8;
  c.rope_orig_ctx = 4096;
  if (c.arch == "deepseek2") c.yarn_log_mul = 0.1f;
}

}  // namespace cohort::testing
