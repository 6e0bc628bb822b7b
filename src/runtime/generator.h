// Single-sequence generation on one slot of a Stepper: prefill the prompt in chunks, then
// sample one token at a time, handing each to a callback. What `cohort run` uses; the engine
// loop (runtime/slot_scheduler.h) drives the same steps (runtime/sequence.h) for many.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/status.h"
#include "runtime/stepper.h"
#include "text/sampler.h"

namespace cohort::runtime {

struct GenerateStats {
  int64_t n_prompt = 0;
  int64_t n_generated = 0;
  double prompt_s = 0;    // wall time of the prefill
  double generate_s = 0;  // wall time from the first sampled token to the last
  bool stopped_at_eog = false;
};

class Generator {
 public:
  // eog(id) says whether a token ends generation (the tokenizer's EOS/EOT). Runs on `slot`.
  Generator(Stepper& stepper, std::function<bool(int32_t)> eog, int64_t slot = 0)
      : stepper_(stepper), eog_(std::move(eog)), slot_(slot) {}
  // The whole model on this node, on one cache.
  Generator(model::Transformer& model, model::KvCache& kv, std::function<bool(int32_t)> eog)
      : local_(std::make_unique<LocalStepper>(model, std::span<model::KvCache>(&kv, 1))),
        stepper_(*local_),
        eog_(std::move(eog)) {}

  // Feeds prompt (at position 0; the cache is overwritten), then samples up to n_predict
  // tokens, calling on_token(id) for each; on_token returning false stops early. Stops at an
  // end-of-generation token (which is passed to on_token too) or when the context is full.
  Status generate(const std::vector<int32_t>& prompt, int64_t n_predict, text::Sampler& sampler,
                  const std::function<bool(int32_t)>& on_token, GenerateStats* stats);

  // During on_token: the logits the token was sampled from (after the sampler's in-place
  // adjustments; untouched by greedy sampling without penalties).
  const std::vector<float>& last_logits() const { return logits_; }

  // Teacher forcing: logits for every position of tokens ([n][n_vocab]), for evaluation.
  Status score(const std::vector<int32_t>& tokens, std::vector<float>* logits);

 private:
  Status prefill(const std::vector<int32_t>& tokens, std::vector<float>* all_logits);

  std::unique_ptr<LocalStepper> local_;
  Stepper& stepper_;
  std::function<bool(int32_t)> eog_;
  int64_t slot_ = 0;
  std::vector<float> logits_;
};

}  // namespace cohort::runtime
