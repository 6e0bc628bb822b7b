// What `cohort bench cluster` measures on one placement of a model over a cluster, and what
// the placement implies for the step-time model (runtime/step_model.h).
//
// Measurement (one open cluster, the head driving its Stepper synchronously):
//   pp: one prompt of n_prompt tokens from an empty slot, in steps of max_batch tokens;
//       tok/s = n_prompt / time. Its time is also the time to first token (ttft): the
//       prompt's last step yields the logits of the first generated token.
//   tg: n_gen single-token steps after an untimed 4-token prompt; tok/s = n_gen / time.
//       During tg the head's communication is counted (comm/counting_communicator.h):
//       operations, payload bytes and time inside them, per token.
// Each test runs once to warm up, then `reps` times; every figure is the median.
#pragma once

#include <cstdint>
#include <functional>

#include "cluster/planner.h"
#include "comm/counting_communicator.h"
#include "core/status.h"
#include "runtime/stepper.h"

namespace cohort::runtime {

struct ClusterBenchOptions {
  int64_t n_prompt = 64;  // 0 skips pp
  int64_t n_gen = 32;     // 0 skips tg
  int reps = 3;           // >= 1
};

struct ClusterMeasurement {
  double pp_tok_s = 0;
  double ttft_ms = 0;
  double tg_tok_s = 0;
  double comm_ms_per_token = 0;   // head time inside communication, per generated token
  double head_ops_per_token = 0;  // head communication calls per generated token
  double bytes_per_token = 0;     // head payload bytes per generated token
};

// comm_totals: the head's counters (ClusterSession::comm_totals). Errors: a step failed.
Result<ClusterMeasurement> measure_cluster(Stepper& stepper,
                                           const std::function<comm::CommTotals()>& comm_totals,
                                           const ClusterBenchOptions& options);

// Waits on a peer on one generated token's critical path under `plan` (n_layers layers):
// the header and token broadcasts (2), two all-reduces per layer in every stage of more than
// one rank, one send per rank of each following stage at every stage boundary, and the
// logits sent back to the head when the last stage is not the head's. Pure tensor over N
// ranks: 2 + 2 x n_layers; pipeline of S stages: 2 + S.
int64_t critical_path_syncs(const cluster::Plan& plan);

// Of the split compute (the layers), the fraction on one token's critical path: the sum
// over stages of its layers / (all layers x its ranks). Pipeline: 1; tensor over N: 1/N.
double compute_share(const cluster::Plan& plan);

}  // namespace cohort::runtime
