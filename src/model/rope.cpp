#include "model/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace cohort::model {
namespace {

// The pair index that turns n_turns times over ctx positions (fractional).
float corr_dim(int64_t n_rot, int64_t ctx, float n_turns, float base) {
  return static_cast<float>(n_rot) *
         std::log(static_cast<float>(ctx) / (n_turns * 2 * std::numbers::pi_v<float>)) /
         (2 * std::log(base));
}

}  // namespace

YarnCorrDims yarn_corr_dims(const HParams& hp) {
  const float lo =
      std::floor(corr_dim(hp.n_rot, hp.rope_orig_ctx, hp.yarn_beta_fast, hp.rope_base));
  const float hi = std::ceil(corr_dim(hp.n_rot, hp.rope_orig_ctx, hp.yarn_beta_slow, hp.rope_base));
  return {std::max(0.0f, lo), std::min(static_cast<float>(hp.n_rot - 1), hi)};
}

std::vector<float> rope_rates(const HParams& hp, std::span<const float> freq_factors) {
  const int64_t half = hp.n_rot / 2;
  std::vector<float> rate(half);
  YarnCorrDims corr;
  if (hp.rope_scaling == RopeScaling::kYarn) corr = yarn_corr_dims(hp);
  for (int64_t i = 0; i < half; ++i) {
    // In float as llama2.c and llama.cpp compute it, so greedy tokens match theirs.
    float f =
        1.0f / std::pow(hp.rope_base, static_cast<float>(2 * i) / static_cast<float>(hp.n_rot));
    if (!freq_factors.empty()) f /= freq_factors[i];
    switch (hp.rope_scaling) {
      case RopeScaling::kNone:
        break;
      case RopeScaling::kLinear:
        f /= hp.rope_factor;
        break;
      case RopeScaling::kYarn: {
        const float y = (static_cast<float>(i) - corr.low) / std::max(0.001f, corr.high - corr.low);
        const float extrapolate = 1.0f - std::clamp(y, 0.0f, 1.0f);
        f *= extrapolate + (1.0f - extrapolate) / hp.rope_factor;
        break;
      }
    }
    rate[i] = f;
  }
  return rate;
}

float rope_magnitude(const HParams& hp) {
  if (hp.rope_scaling != RopeScaling::kYarn || hp.is_mla()) return 1.0f;
  return 1.0f + 0.1f * std::log(hp.rope_factor);
}

float attention_scale(const HParams& hp) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  if (hp.rope_scaling != RopeScaling::kYarn || !hp.is_mla()) return scale;
  const float mscale = 1.0f + hp.yarn_log_mul * std::log(hp.rope_factor);
  return mscale * mscale * scale;
}

}  // namespace cohort::model
