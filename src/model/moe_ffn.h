// The feed-forward block of a mixture-of-experts layer on one rank. A router (a [n_expert]
// x [dim] matrix, whole on every rank) scores the experts for each token; the token goes to
// the n_expert_used best, weighted by the softmax of all scores renormalised over the chosen
// ones (qwen3moe's norm_topk_prob; for Mixtral, top-k then softmax over those k, which is
// the same). Each rank runs only the experts it holds (ShardSpec expert range), on its FFN
// columns of each, and leaves its partial sum of the weighted expert outputs for the
// caller's all-reduce: summed over ranks that is the layer's whole FFN output, however the
// experts are spread (expert parallel) or sliced (tensor parallel). deepseek2 routes with
// route_deepseek2 and adds its shared experts' columns held here (LayerWeights::shared).
//
// Thread-safety: one thread calls forward() at a time; the matmuls use every pool thread.
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/kernels.h"
#include "model/hparams.h"
#include "model/shard_spec.h"
#include "model/weights.h"

namespace cohort::model {

// How many tokens the router sent to each expert, per layer of the shard (every rank counts
// all experts: the router runs everywhere). Prefill and decode tokens both count.
struct ExpertUsage {
  int64_t layer_begin = 0;  // model index of the first counted layer
  int64_t n_layers = 0;
  int64_t n_expert = 0;
  std::vector<uint64_t> tokens;  // [n_layers][n_expert]

  uint64_t at(int64_t layer, int64_t expert) const {
    return tokens[static_cast<size_t>((layer - layer_begin) * n_expert + expert)];
  }
};

// Picks the k largest of n logits (ties to the lower index), best first, into ids, and their
// weights, softmax over all n renormalised over the k, into weights (summing to 1).
void route_top_k(const float* logits, int64_t n, int64_t k, int32_t* ids, float* weights);

// deepseek2's routing of one token over hp.n_expert logits: scores by hp.gating (softmax
// or sigmoid); the hp.n_expert_used best of score + bias (bias may be null) chosen among
// the hp.n_expert_groups_used groups (consecutive runs of experts) whose two best biased
// scores sum highest; weights the unbiased scores of the chosen, divided by their sum when
// hp.expert_weights_norm, times hp.expert_weights_scale. Ties go to the lower index.
// scratch holds 2 * hp.n_expert floats.
void route_deepseek2(const HParams& hp, const float* logits, const float* bias, int32_t* ids,
                     float* weights, float* scratch);

class MoeFfn {
 public:
  MoeFfn(const HParams& hp, const ShardSpec& shard, int64_t max_batch,
         const kernels::KernelTable& kt, ThreadPool& pool);

  // Bytes of matmul workspace forward() needs for the matrices of L.
  size_t workspace_bytes(const LayerWeights& L) const;

  // xn: [n_tokens][dim] normalised input of layer (the shard's index `layer`); out:
  // [n_tokens][dim], overwritten with this rank's share of the FFN output. workspace holds
  // workspace_bytes() for every layer.
  void forward(const LayerWeights& L, int64_t layer, const float* xn, int64_t n_tokens, float* out,
               void* workspace);

  const ExpertUsage& usage() const { return usage_; }

 private:
  HParams hp_;
  ShardSpec shard_;
  int64_t max_batch_;
  const kernels::KernelTable& kt_;
  ThreadPool& pool_;
  ExpertUsage usage_;
  // down_ = the FFN w of the n rows of x.
  void run_expert(const ExpertWeights& w, const float* x, int64_t n, void* workspace);

  // Scratch for max_batch tokens: router logits, choices, and one expert's gathered batch.
  std::vector<float> logits_, weights_, x_, gate_, up_, down_, token_weight_, route_scratch_;
  std::vector<int32_t> ids_, token_;
};

}  // namespace cohort::model
