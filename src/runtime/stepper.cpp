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

Status Stepper::step_batch(std::span<const StepEntry> entries, float* logits) {
  for (size_t i = 0; i < entries.size(); ++i) {
    const StepEntry& e = entries[i];
    COHORT_RETURN_IF_ERROR(
        step(e.slot, e.tokens, e.n, e.pos0, false, logits + static_cast<int64_t>(i) * n_vocab()));
  }
  return Status::ok();
}

Status Stepper::submit_batch(std::span<const StepEntry> entries) {
  for (const StepEntry& e : entries) {
    COHORT_RETURN_IF_ERROR(submit(e.slot, e.tokens, e.n, e.pos0, false));
  }
  return Status::ok();
}

Status Stepper::collect_batch(int64_t n_entries, float* logits) {
  for (int64_t i = 0; i < n_entries; ++i) COHORT_RETURN_IF_ERROR(collect(logits + i * n_vocab()));
  return Status::ok();
}

Status Stepper::step_hidden(int64_t /*slot*/, const int32_t* /*tokens*/, int64_t /*n*/,
                            int64_t /*pos0*/, float* /*hidden*/) {
  return Status::unsupported("stepper: this model gives no hidden states (embeddings)");
}

Status LocalStepper::step_hidden(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                                 float* hidden) {
  if (slot < 0 || slot >= n_slots()) {
    return Status::invalid_argument("stepper: no slot " + std::to_string(slot) + " of " +
                                    std::to_string(n_slots()));
  }
  model::ForwardIo io;
  io.tokens = tokens;
  io.hidden_normed = hidden;
  return model_.forward(n, pos0, slots_[static_cast<size_t>(slot)], io);
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

Status LocalStepper::step_batch(std::span<const StepEntry> entries, float* logits) {
  seqs_.clear();
  tokens_.clear();
  for (const StepEntry& e : entries) {
    if (e.slot < 0 || e.slot >= n_slots()) {
      return Status::invalid_argument("stepper: no slot " + std::to_string(e.slot) + " of " +
                                      std::to_string(n_slots()));
    }
    if (e.n < 1 || e.n > max_batch() - static_cast<int64_t>(tokens_.size())) {
      return Status::invalid_argument("stepper: a batch of more than " +
                                      std::to_string(max_batch()) + " tokens, or an empty entry");
    }
    seqs_.push_back({&slots_[static_cast<size_t>(e.slot)], e.pos0, e.n});
    tokens_.insert(tokens_.end(), e.tokens, e.tokens + e.n);
  }
  model::ForwardIo io;
  io.tokens = tokens_.data();
  io.logits = logits;
  return model_.forward_batch(seqs_, io);
}

Status LocalStepper::submit_batch(std::span<const StepEntry> entries) {
  std::vector<float> logits(entries.size() * static_cast<size_t>(n_vocab()));
  COHORT_RETURN_IF_ERROR(step_batch(entries, logits.data()));
  keep_for_collect(std::move(logits));
  return Status::ok();
}

Status LocalStepper::collect_batch(int64_t /*n_entries*/, float* logits) {
  return collect(logits);  // submit_batch kept the whole batch as one result
}

}  // namespace cohort::runtime
