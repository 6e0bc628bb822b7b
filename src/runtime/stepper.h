// Forward steps of "the model", wherever it runs: on this node (LocalStepper) or across a
// cluster (ClusterStepper, runtime/cluster_stepper.h). The generation loop sees only this.
//
// Sequence slots: a stepper holds n_slots() independent sequences, each with its own KV
// cache of n_ctx() positions. Every step names its slot; steps of one slot must come in
// position order (a slot is reset simply by stepping it from position 0 again).
//
// Two ways to run a step:
//  - step(): synchronous; returns with the logits. Steps submitted earlier and not yet
//    collected stay queued for collect() (their results are kept aside).
//  - submit() + collect(): asynchronous. submit() starts a step and may return before its
//    logits exist; collect() returns the logits of the oldest submitted, uncollected step
//    (FIFO). A stepper that can overlap steps (a pipeline of several stages) says how many
//    are worth having in flight with max_in_flight(); more may be submitted, they then
//    simply wait. The default implementation below runs submit() synchronously.
//
// Batched steps: step_batch() / submit_batch() + collect_batch() run one step on each of
// several slots (each slot at most once) as one forward where the stepper can (LocalStepper:
// every linear layer over all their rows at once), and give each entry's last token's logits,
// [entries][n_vocab]. The defaults loop over step() / submit() / collect(), so every stepper
// takes them; a submitted batch is collected with collect_batch() of the same entry count,
// in FIFO order with every other submission.
//
// Errors: after step(), submit() or collect() failed, the caller calls abandon(), which
// forgets every step in flight (their logits are never collected); the slots' contents are
// then unspecified.
//
// Thread-safety: one thread drives a stepper (the engine loop).
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "core/status.h"
#include "model/kv_cache.h"
#include "model/transformer.h"

namespace cohort::runtime {

// One slot's share of a batched step: n tokens at positions pos0.. of `slot`.
struct StepEntry {
  int64_t slot = 0;
  const int32_t* tokens = nullptr;
  int64_t n = 1;
  int64_t pos0 = 0;
};

class Stepper {
 public:
  virtual ~Stepper() = default;
  virtual int64_t n_vocab() const = 0;
  virtual int64_t n_ctx() const = 0;  // positions per slot
  virtual int64_t max_batch() const = 0;
  virtual int64_t n_slots() const = 0;
  // Steps worth keeping in flight at once (pipeline stages); 1: no overlap.
  virtual int64_t max_in_flight() const { return 1; }

  // Runs tokens at positions pos0.. of `slot` (0 <= slot < n_slots(), 1 <= n <= max_batch());
  // writes the logits of the last token, or of every token when all_logits ([n][n_vocab]).
  virtual Status step(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0, bool all_logits,
                      float* logits) = 0;

  // Starts the same step as step(); tokens may be reused as soon as it returns.
  virtual Status submit(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                        bool all_logits);
  // The logits of the oldest uncollected submit() (sized as step() writes them).
  // kInternal when nothing is in flight.
  virtual Status collect(float* logits);
  // Forgets every step in flight (after an error).
  virtual void abandon() { done_.clear(); }

  // Embeddings: the floats per token step_hidden() writes (the model's dim); 0 when the
  // stepper has no hidden-state output.
  virtual int64_t n_embd() const { return 0; }
  // How the model wants its per-token states pooled into one embedding (GGUF pooling_type).
  virtual model::Pooling pooling() const { return model::Pooling::kMean; }
  // Runs tokens at positions pos0.. of `slot` as step() does (the slot's cache gets them),
  // but writes, instead of logits, every token's final hidden state after the output norm:
  // [n][n_embd()]. Synchronous, like step(): steps in flight stay queued for collect().
  // The default: kUnsupported.
  virtual Status step_hidden(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                             float* hidden);

  // Moving: a stepper that would run better placed differently (a cluster that found a slow
  // node) says so with wants_relocation(). The driver then starts no new sequence, lets the
  // running ones finish, and, with no step in flight, calls relocate(); every slot's contents
  // are lost after it (whether it succeeded or not), and wants_relocation() is false until
  // the stepper finds a new reason. A failure is returned for logs only: the stepper still
  // takes steps (where it was, or failing them as after any error). Both are called by the
  // driving thread. The defaults never move.
  virtual bool wants_relocation() const { return false; }
  virtual Status relocate() { return Status::ok(); }

  // Batched steps (see above); the entries' tokens add up to at most max_batch().
  virtual Status step_batch(std::span<const StepEntry> entries, float* logits);
  virtual Status submit_batch(std::span<const StepEntry> entries);
  virtual Status collect_batch(int64_t n_entries, float* logits);

 protected:
  // For synchronous steppers: keeps logits for the next collect() / collect_batch().
  void keep_for_collect(std::vector<float> logits) { done_.push_back(std::move(logits)); }

 private:
  std::deque<std::vector<float>> done_;  // the default submit()'s results, oldest first
};

// The whole model on this node, one KvCache per slot.
class LocalStepper final : public Stepper {
 public:
  // model and the caches must outlive the stepper; every cache has the same n_ctx.
  LocalStepper(model::Transformer& model, std::span<model::KvCache> slots)
      : model_(model), slots_(slots) {
    seqs_.reserve(static_cast<size_t>(model.max_batch()));
    tokens_.reserve(static_cast<size_t>(model.max_batch()));
  }
  int64_t n_vocab() const override { return model_.hparams().n_vocab; }
  int64_t n_ctx() const override { return slots_[0].n_ctx(); }
  int64_t max_batch() const override { return model_.max_batch(); }
  int64_t n_slots() const override { return static_cast<int64_t>(slots_.size()); }
  Status step(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0, bool all_logits,
              float* logits) override;
  int64_t n_embd() const override { return model_.hparams().dim; }
  model::Pooling pooling() const override { return model_.hparams().pooling; }
  Status step_hidden(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                     float* hidden) override;
  // One forward over every entry's rows (Transformer::forward_batch).
  Status step_batch(std::span<const StepEntry> entries, float* logits) override;
  Status submit_batch(std::span<const StepEntry> entries) override;
  Status collect_batch(int64_t n_entries, float* logits) override;

 private:
  model::Transformer& model_;
  std::span<model::KvCache> slots_;
  // step_batch's rows, sized for max_batch once.
  std::vector<model::BatchSeq> seqs_;
  std::vector<int32_t> tokens_;
};

}  // namespace cohort::runtime
