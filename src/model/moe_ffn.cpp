#include "model/moe_ffn.h"

#include <algorithm>
#include <cmath>

#include "kernels/matmul.h"

namespace cohort::model {

namespace {

// The k largest of n scores into ids, best first (ties to the lower index). k passes of
// arg-max: k is small (2..8) and this needs no scratch.
void top_k(const float* scores, int64_t n, int64_t k, int32_t* ids) {
  for (int64_t j = 0; j < k; ++j) {
    int32_t best = -1;
    for (int64_t e = 0; e < n; ++e) {
      if (std::find(ids, ids + j, static_cast<int32_t>(e)) != ids + j) continue;
      if (best < 0 || scores[e] > scores[best]) best = static_cast<int32_t>(e);
    }
    ids[j] = best;
  }
}

}  // namespace

void route_top_k(const float* logits, int64_t n, int64_t k, int32_t* ids, float* weights) {
  top_k(logits, n, k, ids);
  const float max = logits[ids[0]];
  double all = 0;
  for (int64_t e = 0; e < n; ++e) all += std::exp(static_cast<double>(logits[e] - max));
  double chosen = 0;
  for (int64_t j = 0; j < k; ++j) {
    weights[j] = static_cast<float>(std::exp(static_cast<double>(logits[ids[j]] - max)) / all);
    chosen += weights[j];
  }
  for (int64_t j = 0; j < k; ++j) weights[j] = static_cast<float>(weights[j] / chosen);
}

void route_deepseek2(const HParams& hp, const float* logits, const float* bias, int32_t* ids,
                     float* weights, float* scratch) {
  const int64_t n = hp.n_expert, k = hp.n_expert_used;
  float* score = scratch;
  float* choose = scratch + n;
  if (hp.gating == Gating::kSigmoid) {
    for (int64_t e = 0; e < n; ++e) score[e] = 1.0f / (1.0f + std::exp(-logits[e]));
  } else {
    const float max = *std::max_element(logits, logits + n);
    double sum = 0;
    for (int64_t e = 0; e < n; ++e) sum += std::exp(static_cast<double>(logits[e] - max));
    for (int64_t e = 0; e < n; ++e)
      score[e] = static_cast<float>(std::exp(static_cast<double>(logits[e] - max)) / sum);
  }
  for (int64_t e = 0; e < n; ++e) choose[e] = score[e] + (bias ? bias[e] : 0.0f);
  const int64_t groups = hp.n_expert_groups, per = n / groups;
  if (groups > 1 && hp.n_expert_groups_used < groups) {
    // A group's worth: the sum of its best two biased scores (its best, in groups of one).
    float group_score[kMaxExpertGroups];
    int32_t group_ids[kMaxExpertGroups];
    int32_t best2[2];
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t m = std::min<int64_t>(2, per);
      top_k(choose + g * per, per, m, best2);
      group_score[g] = 0;
      for (int64_t j = 0; j < m; ++j) group_score[g] += choose[g * per + best2[j]];
    }
    top_k(group_score, groups, hp.n_expert_groups_used, group_ids);
    for (int64_t g = 0; g < groups; ++g) {
      if (std::find(group_ids, group_ids + hp.n_expert_groups_used, g) !=
          group_ids + hp.n_expert_groups_used)
        continue;
      std::fill(choose + g * per, choose + (g + 1) * per, -INFINITY);
    }
  }
  top_k(choose, n, k, ids);
  double sum = 0;
  for (int64_t j = 0; j < k; ++j) sum += weights[j] = score[ids[j]];
  for (int64_t j = 0; j < k; ++j) {
    const double w = hp.expert_weights_norm ? weights[j] / sum : weights[j];
    weights[j] = static_cast<float>(w * hp.expert_weights_scale);
  }
}

MoeFfn::MoeFfn(const HParams& hp, const ShardSpec& shard, int64_t max_batch,
               const kernels::KernelTable& kt, ThreadPool& pool)
    : hp_(hp), shard_(shard), max_batch_(max_batch), kt_(kt), pool_(pool) {
  const int64_t B = max_batch, k = hp.n_expert_used, dim = hp.dim, ffn = shard.n_ffn();
  usage_.layer_begin = shard.layer_begin;
  usage_.n_layers = shard.n_layers();
  usage_.n_expert = hp.n_expert;
  usage_.tokens.assign(static_cast<size_t>(shard.n_layers() * hp.n_expert), 0);
  logits_.assign(B * hp.n_expert, 0.f);
  ids_.assign(B * k, 0);
  weights_.assign(B * k, 0.f);
  // A token picks an expert at most once, so one expert's batch has at most B tokens.
  token_.assign(B, 0);
  token_weight_.assign(B, 0.f);
  x_.assign(B * dim, 0.f);
  route_scratch_.assign(2 * hp.n_expert, 0.f);
  // The shared experts (deepseek2) may be wider than one routed expert.
  const int64_t width = std::max(ffn, hp.n_expert_shared * hp.ffn_dim);
  gate_.assign(B * width, 0.f);
  up_.assign(B * width, 0.f);
  down_.assign(B * dim, 0.f);
}

size_t MoeFfn::workspace_bytes(const LayerWeights& L) const {
  size_t ws = kernels::matmul_workspace_bytes(kt_, L.router, max_batch_);
  auto need = [&](const ExpertWeights& e) {
    if (e.gate.data == nullptr) return;
    for (const auto* m : {&e.gate, &e.up, &e.down})
      ws = std::max(ws, kernels::matmul_workspace_bytes(kt_, *m, max_batch_));
  };
  need(L.shared);
  for (const ExpertWeights& e : L.experts) need(e);
  return ws;
}

void MoeFfn::run_expert(const ExpertWeights& w, const float* x, int64_t n, void* workspace) {
  const int64_t dim = hp_.dim, cols = w.gate.rows;
  const kernels::MatmulOutput gate_up[] = {{&w.gate, gate_.data()}, {&w.up, up_.data()}};
  kernels::matmul_shared_input(kt_, pool_, gate_up, x, dim, n, workspace);
  kt_.silu_mul(gate_.data(), up_.data(), gate_.data(), n * cols);
  kernels::matmul(kt_, pool_, w.down, gate_.data(), cols, n, down_.data(), workspace);
}

void MoeFfn::forward(const LayerWeights& L, int64_t layer, const float* xn, int64_t n_tokens,
                     float* out, void* workspace) {
  const int64_t dim = hp_.dim, E = hp_.n_expert, k = hp_.n_expert_used;
  kernels::matmul(kt_, pool_, L.router, xn, dim, n_tokens, logits_.data(), workspace);
  uint64_t* counts = &usage_.tokens[static_cast<size_t>(layer * E)];
  const float* bias = L.router_bias.empty() ? nullptr : L.router_bias.data();
  for (int64_t t = 0; t < n_tokens; ++t) {
    if (hp_.is_mla()) {
      route_deepseek2(hp_, &logits_[t * E], bias, &ids_[t * k], &weights_[t * k],
                      route_scratch_.data());
    } else {
      route_top_k(&logits_[t * E], E, k, &ids_[t * k], &weights_[t * k]);
    }
    for (int64_t j = 0; j < k; ++j) ++counts[ids_[t * k + j]];
  }

  std::fill(out, out + n_tokens * dim, 0.f);
  for (size_t local = 0; local < L.experts.size(); ++local) {
    const int32_t expert = static_cast<int32_t>(shard_.expert_begin + local);
    // Gather the tokens routed here into one batch, so prefill runs each expert as a gemm.
    int64_t n = 0;
    for (int64_t t = 0; t < n_tokens; ++t) {
      for (int64_t j = 0; j < k; ++j) {
        if (ids_[t * k + j] != expert) continue;
        token_[n] = static_cast<int32_t>(t);
        token_weight_[n] = weights_[t * k + j];
        std::copy(xn + t * dim, xn + (t + 1) * dim, &x_[n * dim]);
        ++n;
      }
    }
    if (n == 0) continue;
    run_expert(L.experts[local], x_.data(), n, workspace);
    for (int64_t i = 0; i < n; ++i) {
      float* o = out + token_[i] * dim;
      const float* d = &down_[i * dim];
      const float s = token_weight_[i];
      for (int64_t c = 0; c < dim; ++c) o[c] += s * d[c];
    }
  }
  if (L.shared.gate.data == nullptr) return;
  // Shared experts: every token, weight 1.
  run_expert(L.shared, xn, n_tokens, workspace);
  kt_.add(out, down_.data(), out, n_tokens * dim);
}

}  // namespace cohort::model
