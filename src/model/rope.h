// Rotary position embedding tables of a model: the rate at which each rotated pair turns
// per position, the magnitude its cos/sin carry, and the softmax scale of q.k, for every
// rope scaling the loader accepts (HParams::rope_scaling).
//
// YaRN (Peng et al. 2023, as llama.cpp's ggml applies it): with s = rope.scaling.factor and
// the base rate w_i = base^(-2i / n_rot) of pair i (divided by a rope_freqs factor where the
// model has them), the rate blends extrapolation (w_i) and interpolation (w_i / s):
//   rate_i = w_i * (m_i + (1 - m_i) / s),  m_i = 1 - clamp((i - low) / max(high - low, 0.001))
// where low and high are the "correction dims" of the pairs that turn beta_fast and
// beta_slow times over the original context L: d(beta) = n_rot * ln(L / (2 pi beta)) /
// (2 ln base), low = max(0, floor(d(beta_fast))), high = min(n_rot - 1, ceil(d(beta_slow))).
// Fast pairs (i <= low) keep their rate, slow ones (i >= high) are interpolated. cos and sin
// then carry a magnitude 1 + 0.1 ln s, except in deepseek2, whose rope stays unit and whose
// softmax scale instead becomes mscale^2 / sqrt(head_dim), mscale = 1 + log_mul * ln s
// (log_mul as GGUF stores it: 0.1 x HF's mscale_all_dim), as DeepSeek's reference does.
#pragma once

#include <span>
#include <vector>

#include "model/hparams.h"

namespace cohort::model {

struct YarnCorrDims {
  float low = 0, high = 0;  // pair indices, as floats (the ramp divides by their distance)
};

// The correction dims of hp (rope_scaling must be kYarn).
YarnCorrDims yarn_corr_dims(const HParams& hp);

// Per rotated pair i < n_rot / 2: the angle at position p is p * rate[i]. freq_factors:
// the model's rope_freqs (n_rot / 2 divisors), or empty.
std::vector<float> rope_rates(const HParams& hp, std::span<const float> freq_factors);

// Multiplier of every cos and sin (1 but for YaRN outside deepseek2).
float rope_magnitude(const HParams& hp);

// The factor applied to q.k before the softmax: 1 / sqrt(head_dim), times mscale^2 for
// deepseek2 under YaRN.
float attention_scale(const HParams& hp);

}  // namespace cohort::model
