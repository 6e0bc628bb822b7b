// Multi-head latent attention (deepseek2) on one rank's query heads. Per token the cache
// holds only the normed KV latent (kv_lora_rank values) and the roped key part shared by
// every head (n_rot values), computed on every rank (it is small). Attention runs in the
// latent space: each head's query is multiplied into the latent through the K half of its
// attn_kv_b rows ("absorbed"), scores are q_latent . latent + q_rope . k_rope, the softmax
// weights sum the cached latents, and the V half of the head's attn_kv_b rows turns that
// sum into the head's output. A decode step thus reads each cached position once per head
// at kv_lora_rank + n_rot values, never re-expanding keys and values for the whole cache.
//
// The absorbed matrices are this rank's attn_kv_b rows (or its heads of attn_k_b and
// attn_v_b, the split form of the same matrices) dequantized to f32 at creation
// (heads x (qk_nope + v_head_dim) x kv_lora_rank floats per layer: 64 MiB per layer for
// DeepSeek V3's whole 128 heads on one node).
//
// Thread-safety: one thread calls forward() at a time; it uses every pool thread.
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/kernels.h"
#include "model/hparams.h"
#include "model/kv_cache.h"
#include "model/shard_spec.h"
#include "model/weights.h"

namespace cohort::model {

// What forward() needs to know of each row of the batch.
struct MlaRows {
  KvCache* const* kv = nullptr;  // [n_tokens]: the row's sequence cache
  const int64_t* pos = nullptr;  // [n_tokens]: the row's position
  const float* cos = nullptr;    // [n_tokens][n_rot / 2]: rotary tables of the row
  const float* sin = nullptr;
};

class MlaAttention {
 public:
  // layers: the shard's bound layers (their attn_kv_b or attn_k_b/attn_v_b is dequantized
  // here).
  MlaAttention(const HParams& hp, const ShardSpec& shard, const std::vector<LayerWeights>& layers,
               int64_t max_batch, const kernels::KernelTable& kt, ThreadPool& pool);

  // A cache for one sequence of up to n_ctx positions: one latent row per layer and position.
  static Result<KvCache> new_cache(const HParams& hp, int64_t n_layers, int64_t n_ctx, DType type);

  // xn: [n_tokens][dim] normed input of the shard's layer `layer`; stores each row's latent
  // in its cache, then writes att: [n_tokens][shard heads x v_head_dim], the heads' outputs
  // before attn_output. workspace: matmul workspace for wq_a, wq and wkv_a of L.
  void forward(const LayerWeights& L, int64_t layer, const float* xn, int64_t n_tokens,
               const MlaRows& rows, float* att, void* workspace);

 private:
  // The latent-space attention of token t's head h (shard-local) over positions 0..pos.
  void attend(int64_t layer, int64_t t, int64_t h, const KvCache& kv, int64_t pos, float* out,
              float* scratch) const;

  // The kernel table's f32 dot product (f32 activations: its vec_dot_type is f32).
  float dot(const float* a, const float* b, int64_t n) const { return dot_(n, a, b); }

  HParams hp_;
  int64_t n_heads_;  // this shard's
  const kernels::KernelTable& kt_;
  ThreadPool& pool_;
  float (*dot_)(int64_t n, const void* w, const void* a);
  std::vector<std::vector<float>> k_absorb_;  // per layer: [head][kv_lora][qk_nope]
  std::vector<std::vector<float>> v_up_;      // per layer: [head][v_head_dim][kv_lora]
  // Scratch for max_batch tokens: compressed query, queries, latents with k_rope.
  std::vector<float> q_a_, q_, kv_a_;
  std::vector<float> thread_scratch_;  // per pool thread: latent query/output, row, scores
  int64_t scratch_per_thread_ = 0;
};

}  // namespace cohort::model
