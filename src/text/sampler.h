// Picks the next token from logits. Order of operations (as llama.cpp's default chain):
// penalties (repetition, frequency, presence over the last repeat_last_n accepted tokens),
// then, if temperature <= 0, greedy argmax (ties to the lowest id); otherwise top-k, top-p,
// min-p, temperature, and a draw from the seeded RNG. Same seed and same inputs give the
// same tokens.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "core/rng.h"

namespace cohort::text {

struct SamplerConfig {
  float temperature = 0.8f;
  int32_t top_k = 40;           // <= 0: off
  float top_p = 0.95f;          // >= 1: off
  float min_p = 0.05f;          // <= 0: off
  float repeat_penalty = 1.0f;  // 1: off; > 1 discourages repeats
  int32_t repeat_last_n = 64;
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  uint64_t seed = 0xC0407;
  // Constrained decoding (text/output_constraint.h): when set, only ids it allows can be
  // picked; it is asked about every id of the vocabulary, after the penalties.
  std::function<bool(int32_t)> allow;
};

// What sample() returns when `allow` allows no token at all.
inline constexpr int32_t kNoToken = -1;

class Sampler {
 public:
  Sampler(SamplerConfig config, int32_t n_vocab);

  // Chooses a token from logits[0..n_vocab); logits may be modified. kNoToken when
  // config.allow refuses every id.
  int32_t sample(float* logits);
  // Records a token (prompt or generated) for the penalties; keeps the last repeat_last_n
  // (none when repeat_last_n <= 0). Ids outside [0, n_vocab) are ignored.
  void accept(int32_t token);
  // Forgets the accepted tokens and restarts the RNG from config.seed.
  void reset();

  const SamplerConfig& config() const { return config_; }

 private:
  SamplerConfig config_;
  int32_t n_vocab_;
  Rng rng_;
  std::deque<int32_t> recent_;
  std::vector<std::pair<float, int32_t>> candidates_;  // reused, no allocation per token
  std::vector<int32_t> counts_;  // occurrences of each id in recent_ (n_vocab entries)
};

}  // namespace cohort::text
