#include "runtime/generator.h"

#include <algorithm>

#include "core/clock.h"

namespace cohort::runtime {

Status Generator::prefill(const std::vector<int32_t>& tokens, std::vector<float>* all_logits) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t n_vocab = stepper_.n_vocab();
  if (n == 0) return Status::invalid_argument("generate: empty prompt");
  if (n > stepper_.n_ctx()) {
    return Status::out_of_range("generate: prompt of " + std::to_string(n) +
                                " tokens exceeds the context of " +
                                std::to_string(stepper_.n_ctx()));
  }
  logits_.resize(n_vocab);
  if (all_logits) all_logits->resize(n * n_vocab);
  for (int64_t p = 0; p < n; p += stepper_.max_batch()) {
    const int64_t len = std::min(stepper_.max_batch(), n - p);
    float* out = all_logits ? all_logits->data() + p * n_vocab : logits_.data();
    COHORT_RETURN_IF_ERROR(stepper_.step(tokens.data() + p, len, p, all_logits != nullptr, out));
  }
  if (all_logits) std::copy(all_logits->end() - n_vocab, all_logits->end(), logits_.begin());
  return Status::ok();
}

Status Generator::score(const std::vector<int32_t>& tokens, std::vector<float>* logits) {
  return prefill(tokens, logits);
}

Status Generator::generate(const std::vector<int32_t>& prompt, int64_t n_predict,
                           text::Sampler& sampler, const std::function<bool(int32_t)>& on_token,
                           GenerateStats* stats) {
  GenerateStats st;
  st.n_prompt = static_cast<int64_t>(prompt.size());
  const double t0 = now_s();
  COHORT_RETURN_IF_ERROR(prefill(prompt, nullptr));
  const double t1 = now_s();
  st.prompt_s = t1 - t0;
  for (int32_t id : prompt) sampler.accept(id);

  int64_t pos = st.n_prompt;
  for (int64_t i = 0; i < n_predict; ++i) {
    const int32_t next = sampler.sample(logits_.data());
    sampler.accept(next);
    ++st.n_generated;
    const bool keep_going = on_token(next);
    if (eog_(next)) {
      st.stopped_at_eog = true;
      break;
    }
    if (!keep_going || i + 1 == n_predict || pos >= stepper_.n_ctx()) break;
    COHORT_RETURN_IF_ERROR(stepper_.step(&next, 1, pos, false, logits_.data()));
    ++pos;
  }
  st.generate_s = now_s() - t1;
  if (stats) *stats = st;
  return Status::ok();
}

}  // namespace cohort::runtime
