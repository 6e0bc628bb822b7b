#include "runtime/sequence.h"

#include <algorithm>

namespace cohort::runtime {

Status prefill(Stepper& stepper, int64_t slot, std::span<const int32_t> tokens, float* last,
               std::vector<float>* all) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t n_vocab = stepper.n_vocab();
  if (n == 0) return Status::invalid_argument("generate: empty prompt");
  if (n > stepper.n_ctx()) {
    return Status::out_of_range("generate: prompt of " + std::to_string(n) +
                                " tokens exceeds the context of " +
                                std::to_string(stepper.n_ctx()));
  }
  if (all) all->resize(n * n_vocab);
  for (int64_t p = 0; p < n; p += stepper.max_batch()) {
    const int64_t len = std::min(stepper.max_batch(), n - p);
    float* out = all ? all->data() + p * n_vocab : last;
    COHORT_RETURN_IF_ERROR(stepper.step(slot, tokens.data() + p, len, p, all != nullptr, out));
  }
  if (all) std::copy(all->end() - n_vocab, all->end(), last);
  return Status::ok();
}

bool Sequence::advance(float* logits) {
  const int32_t id = sampler_.sample(logits);
  if (id == text::kNoToken) return false;  // a constraint allows nothing more: the end
  sampler_.accept(id);
  ++n_generated_;
  const bool keep_going = on_token_(id);
  if (eog_(id)) {
    stopped_at_eog_ = true;
    return false;
  }
  if (!keep_going || n_generated_ >= n_predict_ || pos_ >= n_ctx_) return false;
  next_ = id;
  feed_pos_ = pos_++;
  return true;
}

}  // namespace cohort::runtime
