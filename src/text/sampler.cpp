// PLACEHOLDER: replaced by the real implementation.
#include "text/sampler.h"

namespace cohort::text {

Sampler::Sampler(SamplerConfig config, int32_t n_vocab)
    : config_(config), n_vocab_(n_vocab), rng_(config.seed) {}
int32_t Sampler::sample(float* logits) {
  int32_t best = 0;
  for (int32_t i = 1; i < n_vocab_; ++i) if (logits[i] > logits[best]) best = i;
  return best;
}
void Sampler::accept(int32_t) {}
void Sampler::reset() {}

}  // namespace cohort::text
