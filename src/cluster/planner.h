// Placement: which node computes which part of the model. Pure functions of what was
// measured (node memory and speed, link latency and bandwidth) and the model's shape, so
// they are unit-tested without a network. The plan says why it was chosen.
//
// World ranks: rank 0 is the head. Pipeline stages are contiguous layer ranges in rank
// order; inside a stage, ranks split heads and FFN columns (tensor parallel). Pure pipeline
// is stages of one rank; pure tensor is one stage of every rank; hybrid is both. In a
// mixture-of-experts model, tensor mode slices every expert's FFN columns across the ranks;
// expert mode is one stage of every rank where attention heads are split as in tensor mode
// but each rank holds whole experts, a range of them sized by its free memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/hparams.h"
#include "model/shard_spec.h"

namespace cohort::cluster {

enum class ParallelMode { kAuto, kPipeline, kTensor, kHybrid, kExpert };
const char* parallel_mode_name(ParallelMode m);
Result<ParallelMode> parse_parallel_mode(const std::string& s);

struct NodeDesc {
  std::string name;
  uint64_t free_bytes = 0;  // memory the node may use for weights + KV cache
  double speed = 1.0;       // relative compute speed (1.0 = the head)
};

// Measured one-way latency and bandwidth between nodes i and j (symmetric, diagonal unused).
struct LinkMatrix {
  std::vector<std::vector<double>> latency_us;
  std::vector<std::vector<double>> bandwidth_bytes_per_s;
  static LinkMatrix uniform(int n, double latency_us, double bandwidth_bytes_per_s);
};

// What the planner needs to know of the model.
struct ModelDesc {
  model::HParams hp;
  uint64_t layer_bytes = 0;   // weights of one transformer block
  uint64_t expert_bytes = 0;  // of which its experts (all n_expert of them; 0 when dense)
  uint64_t embed_bytes = 0;   // token embeddings
  uint64_t output_bytes = 0;  // output norm + projection (token_embd again when tied)
  int64_t head_align = 1;     // head boundaries must be multiples of this many heads
  int64_t ffn_align = 1;      // FFN column boundaries must be multiples of this

  // Weights one token reads in one block: the experts it is routed to, not all of them.
  uint64_t active_layer_bytes() const;
  uint64_t kv_bytes_per_token_per_layer = 0;  // all KV heads, K and V (deepseek2: the latent)
};

struct RankPlan {
  int node = 0;  // index into the nodes given to plan_placement
  model::ShardSpec shard;
  int stage = 0;
  int tp_rank = 0;  // rank inside its stage's tensor-parallel group
};

struct Plan {
  ParallelMode mode = ParallelMode::kPipeline;
  std::vector<RankPlan> ranks;                // world rank order; rank 0 is node 0 (the head)
  std::vector<std::vector<int>> stage_ranks;  // world ranks of each stage, in order
  std::vector<uint64_t> rank_bytes;           // estimated weights + KV cache per rank
  double est_token_ms_pipeline = 0;           // step-time model, for the explanation
  double est_token_ms_tensor = 0;
  std::string why;  // one paragraph for people

  int n_stages() const { return static_cast<int>(stage_ranks.size()); }
  std::string to_string() const;  // table of ranks, shards and the reason
};

struct PlanOptions {
  ParallelMode mode = ParallelMode::kAuto;
  int64_t n_ctx = 2048;
  int64_t n_slots = 1;    // sequence slots: every rank holds n_slots KV caches of n_ctx
  int tp_group_size = 0;  // hybrid: ranks per stage (0: choose)
  // Seconds of compute per token on a node of speed 1.0 for the whole model (estimated from
  // bytes / measured bandwidth when 0).
  double compute_s_per_token = 0;
  // Share layers and heads by measured speed x free memory (the default), or evenly (for
  // identical nodes, and for reproducible placements whatever the measurements say).
  bool even_shares = false;
};

// Every node gets exactly one rank. Fails with a clear reason when the model does not fit in
// the nodes' memory or cannot be split as asked (e.g. more tensor ranks than aligned heads).
Result<Plan> plan_placement(const std::vector<NodeDesc>& nodes, const LinkMatrix& links,
                            const ModelDesc& model, const PlanOptions& options);

// Splits [0, n) into parts proportional to weights, each boundary a multiple of align and
// each part non-empty. Fails when that is impossible.
Result<std::vector<std::pair<int64_t, int64_t>>> split_range(int64_t n, int64_t align,
                                                             const std::vector<double>& weights);

}  // namespace cohort::cluster
