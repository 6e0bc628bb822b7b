#include "runtime/generator.h"

#include "core/clock.h"
#include "runtime/sequence.h"

namespace cohort::runtime {

Status Generator::prefill(const std::vector<int32_t>& tokens, std::vector<float>* all_logits) {
  logits_.resize(stepper_.n_vocab());
  return runtime::prefill(stepper_, slot_, tokens, logits_.data(), all_logits);
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

  Sequence seq(st.n_prompt, n_predict, stepper_.n_ctx(), sampler, on_token, eog_);
  bool more = n_predict > 0 && seq.advance(logits_.data());
  while (more) {
    const int32_t next = seq.next_token();
    COHORT_RETURN_IF_ERROR(stepper_.step(slot_, &next, 1, seq.feed_pos(), false, logits_.data()));
    more = seq.advance(logits_.data());
  }
  st.n_generated = seq.n_generated();
  st.stopped_at_eog = seq.stopped_at_eog();
  st.generate_s = now_s() - t1;
  if (stats) *stats = st;
  return Status::ok();
}

}  // namespace cohort::runtime
