// The weights one rank uses, bound to tensors of a GGUF file (no copy: matrices point into
// the mmap) and sliced to the rank's ShardSpec. Small vectors (norms, biases, rope factors)
// are converted to f32 and owned. Every tensor's presence, shape and type is validated at
// bind time, so the forward pass can trust them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "format/gguf.h"
#include "kernels/matmul.h"
#include "model/hparams.h"
#include "model/shard_spec.h"

namespace cohort::model {

// One expert's FFN in a mixture-of-experts layer, sliced to the rank's FFN columns.
struct ExpertWeights {
  kernels::WeightMatrix gate, up;  // rows sliced to this rank's FFN columns
  kernels::WeightMatrix down;      // columns sliced likewise
};

struct LayerWeights {
  std::vector<float> attn_norm;        // [dim]
  kernels::WeightMatrix wq, wk, wv;    // rows sliced to this rank's heads
  std::vector<float> bq, bk, bv;       // qwen2 biases, sliced likewise (else empty)
  std::vector<float> q_norm, k_norm;   // qwen3 per-head norms [head_dim] (else empty)
  kernels::WeightMatrix wo;            // columns sliced to this rank's heads
  std::vector<float> ffn_norm;         // [dim]
  kernels::WeightMatrix w_gate, w_up;  // rows sliced to this rank's FFN columns
  kernels::WeightMatrix w_down;        // columns sliced likewise
  // Mixture of experts (instead of w_gate/w_up/w_down): the router, whole on every rank,
  // and the experts [shard.expert_begin, shard.expert_end), in order.
  kernels::WeightMatrix router;  // [n_expert rows][dim]
  std::vector<ExpertWeights> experts;

  // deepseek2 latent attention: wq is attn_q_b (or attn_q without Q compression), rows of
  // this rank's heads, each [qk_nope | qk_rope]; wo's columns are its heads' values.
  kernels::WeightMatrix wq_a;    // [q_lora rows][dim], whole (q_lora_rank > 0)
  std::vector<float> q_a_norm;   // [q_lora]
  kernels::WeightMatrix wkv_a;   // [kv_lora + n_rot rows][dim], whole: [latent | k_rope]
  std::vector<float> kv_a_norm;  // [kv_lora]
  kernels::WeightMatrix wkv_b;   // [this rank's heads x (qk_nope + v_head_dim)][kv_lora]
  // Or, from files of llama.cpp's split conversion (attn_k_b {qk_nope, kv_lora, heads},
  // attn_v_b {kv_lora, v_head_dim, heads}), per head of this rank instead of wkv_b: wk_b[h]
  // [kv_lora rows][qk_nope] (the K half of kv_b transposed) and wv_b[h] [v_head_dim
  // rows][kv_lora] (its V half).
  std::vector<kernels::WeightMatrix> wk_b, wv_b;
  // deepseek2 mixture of experts: the routing bias (exp_probs_b, or empty) and this rank's
  // columns of the shared experts (null data when it runs none of them).
  std::vector<float> router_bias;  // [n_expert]
  ExpertWeights shared;
};

// One tensor as a shard uses it: rows [r0, r1) and columns [c0, c1) of a [rows][cols]
// matrix (GGUF shape {cols, rows}); a vector of n elements is rows = 1, cols = n. Column
// bounds fall on block boundaries of the tensor's type.
struct TensorCut {
  std::string name;
  int64_t rows = 1, cols = 0;
  int64_t r0 = 0, r1 = 1, c0 = 0, c1 = 0;
  bool is_vector = false;  // GGUF shape {cols} rather than {cols, rows}
  // A stack of n_mats such matrices (GGUF shape {cols, rows, n_mats}: a layer's experts),
  // of which matrices [m0, m1) are used, each cut alike; n_mats is 0 for a single matrix.
  int64_t n_mats = 0, m0 = 0, m1 = 0;

  int64_t cut_mats() const { return n_mats ? m1 - m0 : 1; }

  int64_t cut_rows() const { return r1 - r0; }
  int64_t cut_cols() const { return c1 - c0; }
  bool whole() const {
    return r0 == 0 && r1 == rows && c0 == 0 && c1 == cols && m0 == 0 && m1 == n_mats;
  }
};

// A shard file (model/shard_export.h) records the ShardSpec it was cut for; nullopt for an
// ordinary model file.
std::optional<ShardSpec> shard_file_spec(const format::GgufFile& file);

struct Weights {
  kernels::WeightMatrix token_embd;      // [n_vocab rows][dim]; set when the shard embeds
  std::vector<float> output_norm;        // [dim]; set when the shard outputs
  kernels::WeightMatrix output;          // [n_vocab rows][dim] (token_embd when tied)
  std::vector<float> rope_freq_factors;  // [n_rot / 2] (Llama 3.1 "rope_freqs"), or empty
  std::vector<LayerWeights> layers;      // shard.n_layers() entries

  // kt is the kernel table that will run the model: every matrix type must have a vec_dot
  // there, and column slices must fall on block boundaries of each type.
  //
  // file is a whole model, or a shard file cut for exactly this shard (its tensors already
  // sliced; any other shard is refused with a clear error). When cuts is given, it receives
  // every tensor the shard reads, once each, in binding order: what a shard file holds.
  static Result<Weights> bind(const format::GgufFile& file, const HParams& hp,
                              const ShardSpec& shard, const kernels::KernelTable& kt,
                              std::vector<TensorCut>* cuts = nullptr);
};

}  // namespace cohort::model
