// Forward steps across the ranks of a placement plan. Rank 0 (the head) drives: each step
// it broadcasts a small header and the token ids to every rank; each rank runs its shard
// (tensor-parallel ranks of a stage all-reduce inside the model through their stage group);
// the leader (tp rank 0) of each pipeline stage sends the hidden states on to every rank of
// the next stage; the leader of the last stage sends the logits back to rank 0.
//
// Per pair of ranks, messages are sent and received in the same program order on both
// sides, so the world and stage-group traffic never interleave ambiguously.
#pragma once

#include <memory>
#include <vector>

#include "cluster/planner.h"
#include "comm/communicator.h"
#include "model/kv_cache.h"
#include "model/transformer.h"
#include "runtime/stepper.h"

namespace cohort::runtime {

class ClusterRank {
 public:
  // world: every rank of the plan; stage: this rank's tensor-parallel group (a group of one
  // for pure pipeline); model/kv: this rank's shard. All must outlive the ClusterRank.
  ClusterRank(const cluster::Plan& plan, int rank, comm::Communicator& world,
              model::Transformer& model, model::KvCache& kv);

  // Worker side: runs steps as rank 0 sends them until rank 0 sends stop (ok) or a peer
  // fails (the error).
  Status serve(int64_t timeout_ms);

  // Head side (rank 0): one step on every rank; logits as Stepper::step.
  Status step(const int32_t* tokens, int64_t n, int64_t pos0, bool all_logits, float* logits);
  // Head side: tells every rank to leave serve().
  Status stop();

 private:
  struct Header;
  Status run_step(const Header& h, const int32_t* tokens, float* logits);

  const cluster::Plan& plan_;
  int rank_;
  comm::Communicator& world_;
  model::Transformer& model_;
  model::KvCache& kv_;
  int64_t timeout_ms_ = comm::kDefaultTimeoutMs;
  std::vector<int32_t> tokens_;
  std::vector<float> hidden_, logits_;
};

// The head's Stepper over a ClusterRank of rank 0.
class ClusterStepper final : public Stepper {
 public:
  ClusterStepper(ClusterRank& head, const model::Transformer& model, const model::KvCache& kv)
      : head_(head), model_(model), kv_(kv) {}
  int64_t n_vocab() const override { return model_.hparams().n_vocab; }
  int64_t n_ctx() const override { return kv_.n_ctx(); }
  int64_t max_batch() const override { return model_.max_batch(); }
  Status step(const int32_t* tokens, int64_t n, int64_t pos0, bool all_logits,
              float* logits) override {
    return head_.step(tokens, n, pos0, all_logits, logits);
  }

 private:
  ClusterRank& head_;
  const model::Transformer& model_;
  const model::KvCache& kv_;
};

}  // namespace cohort::runtime
