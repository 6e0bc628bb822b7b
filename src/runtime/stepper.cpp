#include "runtime/stepper.h"

#include <algorithm>
#include <string>

namespace cohort::runtime {

Status Stepper::submit(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                       bool all_logits) {
  std::vector<float> logits(static_cast<size_t>((all_logits ? n : 1) * n_vocab()));
  COHORT_RETURN_IF_ERROR(step(slot, tokens, n, pos0, all_logits, logits.data()));
  done_.push_back(std::move(logits));
  return Status::ok();
}

Status Stepper::collect(float* logits) {
  if (done_.empty()) return Status::internal("stepper: collect() with no step in flight");
  std::copy(done_.front().begin(), done_.front().end(), logits);
  done_.pop_front();
  return Status::ok();
}

Status LocalStepper::step(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                          bool all_logits, float* logits) {
  if (slot < 0 || slot >= n_slots()) {
    return Status::invalid_argument("stepper: no slot " + std::to_string(slot) + " of " +
                                    std::to_string(n_slots()));
  }
  model::ForwardIo io;
  io.tokens = tokens;
  io.logits = logits;
  io.all_logits = all_logits;
  return model_.forward(n, pos0, slots_[static_cast<size_t>(slot)], io);
}

}  // namespace cohort::runtime
