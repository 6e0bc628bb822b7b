// The decoding of one sequence on one slot, shared by Generator (one request, step by step)
// and the engine loop (many requests interleaved), so a request decodes the same either way:
//  - prefill(): the prompt through a slot from position 0, in chunks of max_batch().
//  - Sequence: after each step's logits, samples the next token, reports it, and says
//    whether another step is wanted (which token, at which position).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/status.h"
#include "runtime/stepper.h"
#include "text/sampler.h"

namespace cohort::runtime {

// Runs tokens (non-empty, at most n_ctx()) through `slot` from position 0, max_batch() at a
// time, synchronously. Writes the last token's logits to last (n_vocab floats) and, when
// `all` is not null, every token's logits to *all ([n][n_vocab], resized).
Status prefill(Stepper& stepper, int64_t slot, std::span<const int32_t> tokens, float* last,
               std::vector<float>* all);

class Sequence {
 public:
  // n_prompt: positions the prompt holds (already accepted by the sampler). n_predict >= 1
  // tokens at most; the context ends at n_ctx. on_token(id) is called for every sampled
  // token (an end-of-generation one included) and returns false to stop early; eog(id) says
  // whether id ends generation. sampler must outlive the Sequence.
  Sequence(int64_t n_prompt, int64_t n_predict, int64_t n_ctx, text::Sampler& sampler,
           std::function<bool(int32_t)> on_token, std::function<bool(int32_t)> eog)
      : n_predict_(n_predict),
        n_ctx_(n_ctx),
        pos_(n_prompt),
        sampler_(sampler),
        on_token_(std::move(on_token)),
        eog_(std::move(eog)) {}

  // Takes the logits after the prompt or after next_token() (the sampler may modify them).
  // Returns true when the next step should feed next_token() at position feed_pos().
  bool advance(float* logits);

  int32_t next_token() const { return next_; }
  int64_t feed_pos() const { return feed_pos_; }
  int64_t n_generated() const { return n_generated_; }
  bool stopped_at_eog() const { return stopped_at_eog_; }

 private:
  int64_t n_predict_, n_ctx_;
  int64_t pos_;  // the position the next fed token takes
  text::Sampler& sampler_;
  std::function<bool(int32_t)> on_token_;
  std::function<bool(int32_t)> eog_;
  int32_t next_ = -1;
  int64_t feed_pos_ = -1;
  int64_t n_generated_ = 0;
  bool stopped_at_eog_ = false;
};

}  // namespace cohort::runtime
