#include "model/moe_ffn.h"

#include <algorithm>
#include <cmath>

#include "kernels/matmul.h"

namespace cohort::model {

void route_top_k(const float* logits, int64_t n, int64_t k, int32_t* ids, float* weights) {
  // k passes of arg-max: k is small (2..8) and this needs no scratch.
  for (int64_t j = 0; j < k; ++j) {
    int32_t best = -1;
    for (int64_t e = 0; e < n; ++e) {
      if (std::find(ids, ids + j, static_cast<int32_t>(e)) != ids + j) continue;
      if (best < 0 || logits[e] > logits[best]) best = static_cast<int32_t>(e);
    }
    ids[j] = best;
  }
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
  gate_.assign(B * ffn, 0.f);
  up_.assign(B * ffn, 0.f);
  down_.assign(B * dim, 0.f);
}

size_t MoeFfn::workspace_bytes(const LayerWeights& L) const {
  size_t ws = kernels::matmul_workspace_bytes(kt_, L.router, max_batch_);
  for (const ExpertWeights& e : L.experts) {
    for (const auto* m : {&e.gate, &e.up, &e.down})
      ws = std::max(ws, kernels::matmul_workspace_bytes(kt_, *m, max_batch_));
  }
  return ws;
}

void MoeFfn::forward(const LayerWeights& L, int64_t layer, const float* xn, int64_t n_tokens,
                     float* out, void* workspace) {
  const int64_t dim = hp_.dim, E = hp_.n_expert, k = hp_.n_expert_used, ffn = shard_.n_ffn();
  kernels::matmul(kt_, pool_, L.router, xn, dim, n_tokens, logits_.data(), workspace);
  uint64_t* counts = &usage_.tokens[static_cast<size_t>(layer * E)];
  for (int64_t t = 0; t < n_tokens; ++t) {
    route_top_k(&logits_[t * E], E, k, &ids_[t * k], &weights_[t * k]);
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
    const ExpertWeights& w = L.experts[local];
    kernels::matmul(kt_, pool_, w.gate, x_.data(), dim, n, gate_.data(), workspace);
    kernels::matmul(kt_, pool_, w.up, x_.data(), dim, n, up_.data(), workspace);
    kt_.silu_mul(gate_.data(), up_.data(), gate_.data(), n * ffn);
    kernels::matmul(kt_, pool_, w.down, gate_.data(), ffn, n, down_.data(), workspace);
    for (int64_t i = 0; i < n; ++i) {
      float* o = out + token_[i] * dim;
      const float* d = &down_[i * dim];
      const float s = token_weight_[i];
      for (int64_t c = 0; c < dim; ++c) o[c] += s * d[c];
    }
  }
}

}  // namespace cohort::model
