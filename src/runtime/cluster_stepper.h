// Forward steps across the ranks of a placement plan. Rank 0 (the head) drives: each step
// it broadcasts a small header (op, slot, positions) and the token ids to every rank; each
// rank runs its shard on the slot's KV cache (tensor-parallel ranks of a stage all-reduce
// inside the model through their stage group); the leader (tp rank 0) of each pipeline stage
// sends the hidden states on to every rank of the next stage; the leader of the last stage
// sends the logits back to rank 0. A batched step carries several slots' tokens (an entry
// list after the header) and every rank runs them as one forward (Transformer::forward_batch).
//
// Per pair of ranks, messages are sent and received in the same program order on both
// sides, so the world and stage-group traffic never interleave ambiguously.
//
// Overlap: the head may submit a step and return as soon as its own stage (stage 0) has run
// and passed the hidden states on; the logits are received later (collect). Workers loop step
// by step, so with several steps in flight the stages work on different steps at once. How
// this stays free of deadlock is argued in cluster_stepper.cpp (the in-flight window).
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "cluster/planner.h"
#include "comm/collectives.h"
#include "comm/communicator.h"
#include "comm/counting_communicator.h"
#include "model/kv_cache.h"
#include "model/transformer.h"
#include "runtime/stepper.h"

namespace cohort::runtime {

// What a rank's own part of the steps has cost so far: steps run, and the time spent in them
// outside its communicators (computing its shard, and any injected delay). Waiting for a
// slow peer counts as communication, so only the slow node's busy time grows. Written by
// the rank's driving thread, read by any other (heartbeats, slow-node checks).
struct StepTimes {
  std::atomic<int64_t> steps{0};
  std::atomic<int64_t> busy_ns{0};
};

class ClusterRank {
 public:
  // world: every rank of the plan; model: this rank's shard, bound to its stage group;
  // slots: one KV cache per sequence slot (the same count on every rank). All must outlive
  // the ClusterRank. window_bytes: what `world` buffers per pair of ranks without the receiver
  // reading (the in-flight window's budget, see cluster_stepper.cpp); every transport we
  // have buffers comm::kOneStepMaxBytes.
  ClusterRank(const cluster::Plan& plan, int rank, comm::Communicator& world,
              model::Transformer& model, std::span<model::KvCache> slots,
              int64_t window_bytes = static_cast<int64_t>(comm::kOneStepMaxBytes));

  // Worker side: runs steps as rank 0 sends them until rank 0 sends stop (ok) or a peer
  // fails or sends a bad header (the error; kCorrupt for a header naming no valid slot).
  Status serve(int64_t timeout_ms);

  // Head side (rank 0), as Stepper's step/submit/collect/abandon. step() first receives the
  // logits of every step still in flight (kept for collect()).
  Status step(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0, bool all_logits,
              float* logits);
  Status submit(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0, bool all_logits);
  Status collect(float* logits);
  void abandon() { in_flight_.clear(); }
  // Batched steps (Stepper's contract): one message carries every entry, each rank runs them
  // as one forward; collect() then returns the batch's [entries][n_vocab] logits.
  Status step_batch(std::span<const StepEntry> entries, float* logits);
  Status submit_batch(std::span<const StepEntry> entries);
  // Head side, as Stepper::step_hidden: receives the logits still in flight first (kept for
  // collect()), then runs a hidden step; hidden gets [n][dim].
  Status step_hidden(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0, float* hidden);
  // Records every step this rank runs into *times, subtracting the time counters (which must
  // count every communicator the rank and its model use) saw spent communicating. Both must
  // outlive the rank; call before the first step.
  void time_steps(StepTimes* times, const comm::CommCounters* counters) {
    times_ = times;
    counters_ = counters;
  }
  // Test hook: sleeps this long in every step, as a node that computes slowly would.
  void set_step_delay_ms(int64_t ms) { step_delay_ms_ = ms; }
  // The number of pipeline stages: enough steps in flight to keep every stage busy.
  int64_t max_in_flight() const { return plan_.n_stages(); }
  // Head side: receives what is still in flight, then tells every rank to leave serve().
  Status stop();

 private:
  struct Header;
  // A submitted step whose logits have not been collected.
  struct InFlight {
    int64_t n_logits = 0;    // rows of n_vocab floats
    int64_t wire_bytes = 0;  // what the head sent any one rank for it (see the window)
    bool received = false;   // the logits are in `logits`
    std::vector<float> logits;
  };

  Status check_request(int64_t slot, int64_t n) const;
  // Head: checks a batch and lays it out in entries_ and tokens_.
  Status check_batch(std::span<const StepEntry> entries);
  // Worker: checks the entries a batched step's header announced.
  Status check_entries(const Header& h) const;
  // Head: waits for room in the window, then starts the step and records it in flight.
  Status submit_header(const Header& h, const int32_t* tokens, InFlight f);
  // Broadcasts the header and tokens (head) and runs this rank's stage of the step: receive
  // the hidden states, forward, send hidden states or logits on. logits: where the head puts
  // the logits when it computes them itself (single stage).
  Status start(const Header& h, const int32_t* tokens, float* logits);
  Status run_stage(const Header& h, const int32_t* tokens, float* logits);
  // run_stage without the timing and injected delay.
  Status run_stage_untimed(const Header& h, const int32_t* tokens, float* logits);
  int64_t wire_bytes(int64_t n_tokens, int64_t n_entries) const;
  // Head: receives the logits of the oldest step still awaiting them into its buffer.
  Status receive_oldest();
  Status recv_logits(int64_t n_logits, float* dst);
  int64_t n_awaiting() const;

  const cluster::Plan& plan_;
  int rank_;
  comm::Communicator& world_;
  model::Transformer& model_;
  std::span<model::KvCache> slots_;
  int64_t window_bytes_;
  int64_t timeout_ms_ = comm::kDefaultTimeoutMs;
  StepTimes* times_ = nullptr;
  const comm::CommCounters* counters_ = nullptr;
  int64_t step_delay_ms_ = 0;
  std::vector<int32_t> tokens_;
  std::vector<int64_t> entries_;       // a batched step's (slot, n, pos0) triples
  std::vector<model::BatchSeq> seqs_;  // the step's sequences, for forward_batch
  std::vector<float> hidden_, logits_;
  std::deque<InFlight> in_flight_;  // head: oldest first
};

// The head's Stepper over a ClusterRank of rank 0.
class ClusterStepper final : public Stepper {
 public:
  ClusterStepper(ClusterRank& head, const model::Transformer& model,
                 std::span<const model::KvCache> slots)
      : head_(head), model_(model), slots_(slots) {}
  int64_t n_vocab() const override { return model_.hparams().n_vocab; }
  int64_t n_ctx() const override { return slots_[0].n_ctx(); }
  int64_t max_batch() const override { return model_.max_batch(); }
  int64_t n_slots() const override { return static_cast<int64_t>(slots_.size()); }
  int64_t max_in_flight() const override { return head_.max_in_flight(); }
  Status step(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0, bool all_logits,
              float* logits) override {
    return head_.step(slot, tokens, n, pos0, all_logits, logits);
  }
  Status submit(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                bool all_logits) override {
    return head_.submit(slot, tokens, n, pos0, all_logits);
  }
  Status collect(float* logits) override { return head_.collect(logits); }
  void abandon() override { head_.abandon(); }
  int64_t n_embd() const override { return model_.hparams().dim; }
  model::Pooling pooling() const override { return model_.hparams().pooling; }
  Status step_hidden(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                     float* hidden) override {
    return head_.step_hidden(slot, tokens, n, pos0, hidden);
  }
  Status step_batch(std::span<const StepEntry> entries, float* logits) override {
    return head_.step_batch(entries, logits);
  }
  Status submit_batch(std::span<const StepEntry> entries) override {
    return head_.submit_batch(entries);
  }
  Status collect_batch(int64_t /*n_entries*/, float* logits) override {
    return head_.collect(logits);  // a batch is one step in flight
  }

 private:
  ClusterRank& head_;
  const model::Transformer& model_;
  std::span<const model::KvCache> slots_;
};

}  // namespace cohort::runtime
