// Synthetic models: a valid GGUF of any supported architecture, shape and weight type with
// seeded random weights and a working SentencePiece-style vocabulary, for shapes we cannot
// download here (1B, 8B) and for tests. The weights are random: the text they generate is
// noise, and every caller that shows it to a person must say so.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/status.h"
#include "tensor/dtype.h"

namespace cohort::model {

struct SynthConfig {
  std::string arch = "llama";  // llama | qwen2 | qwen3 | qwen3moe | deepseek2
  int64_t dim = 256;
  int64_t n_layers = 2;
  int64_t n_heads = 8;
  int64_t n_kv_heads = 4;
  int64_t head_dim = 0;  // 0: dim / n_heads
  int64_t ffn_dim = 512;
  int64_t n_vocab = 512;
  int64_t n_ctx = 2048;
  DType type = DType::kF32;  // type of the 2-D weights (norms and biases stay f32)
  bool tied_embeddings = false;
  // Llama 3.1-style rope scaling: a "rope_freqs.weight" tensor of per-frequency divisors
  // (factor 8, low/high frequency factors 1 and 4, original context 8192).
  bool llama3_rope = false;
  // Rope scaling metadata ("none", "linear" or "yarn"; model/rope.h): the factor (> 1 for
  // linear and yarn), and for yarn the original context (0: n_ctx / factor) and, deepseek2
  // only, the log multiplier of the softmax scale as GGUF stores it (0: none written).
  std::string rope_scaling = "none";
  float rope_factor = 0;
  int64_t rope_orig_ctx = 0;
  float yarn_log_mul = 0;
  // Mixture of experts (qwen3moe, or llama as Mixtral): n_expert experts per layer of
  // expert_ffn_dim columns each (0: ffn_dim), n_expert_used per token, a router kept in f32
  // as llama.cpp's quantizer keeps it. qwen3moe needs n_expert >= 1; 0 means dense.
  int64_t n_expert = 0;
  int64_t n_expert_used = 0;
  int64_t expert_ffn_dim = 0;
  // deepseek2 (multi-head latent attention; needs n_expert >= 1): head_dim is the key
  // length qk_nope + rope_dim; values are v_dim long (0: head_dim); keys and values come
  // from a kv_lora_rank latent, queries from a q_lora_rank one (0: attn_q directly). The
  // first n_dense_layers layers have a dense FFN of ffn_dim columns, the others
  // n_shared_experts shared experts besides the routed ones, and a router with a random
  // exp_probs_b bias: sigmoid (else softmax) scores, chosen among the best
  // n_expert_groups_used of n_expert_groups groups, weights normalised then scaled by 2.5.
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 64;
  int64_t rope_dim = 0;  // 0: half of head_dim
  int64_t v_dim = 0;
  int64_t n_shared_experts = 1;
  int64_t n_dense_layers = 1;
  int64_t n_expert_groups = 1;
  int64_t n_expert_groups_used = 1;
  bool sigmoid_gating = true;
  // deepseek2: write attn_kv_b as llama.cpp's 2025 conversion does, split into per-head
  // attn_k_b/attn_v_b with the latent's key/value lengths and *_mla per-head ones. The
  // values are attn_kv_b's of the same seed, rearranged (bit-equal for f32 and f16).
  bool split_kv_b = false;
  uint64_t seed = 1;
};

// Checks the config, then writes the GGUF to path. progress(done, total) is called per
// tensor. A weight whose row length is not a multiple of the type's block falls back to
// q8_0 (or f16) as llama.cpp's quantizer does; the fallback is logged.
Status write_synthetic_model(const SynthConfig& config, const std::string& path,
                             const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace cohort::model
