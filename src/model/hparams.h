// Hyper-parameters of a decoder-only transformer, read from GGUF metadata
// ("<arch>.embedding_length", ...) for the architectures we run: llama (Llama 2/3.x,
// Mistral, TinyLlama, stories; with "<arch>.expert_count" > 0 Mixtral-style mixture of
// experts), qwen2 (QKV bias), qwen3 (per-head Q/K RMS norm), qwen3moe (qwen3 attention,
// every FFN a mixture of experts), deepseek2 (DeepSeek V2/V3/R1, Kimi K2: multi-head latent
// attention, shared experts, sigmoid or softmax routing with group limits and a routing
// bias, leading dense layers).
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "format/gguf.h"
#include "kernels/kernels.h"

namespace cohort::model {

enum class Arch { kLlama, kQwen2, kQwen3, kQwen3Moe, kDeepseek2 };

// How a router turns its logits into expert scores (GGUF expert_gating_func 1 and 2).
// At most this many expert groups (deepseek2 routing; V3 has 8).
inline constexpr int64_t kMaxExpertGroups = 64;

enum class Gating { kSoftmax = 1, kSigmoid = 2 };

// How an embedding pools the per-token hidden states: GGUF "<arch>.pooling_type" (llama.cpp's
// numbering: 1 mean, 2 cls, 3 last). Generative models carry none: they get the mean, which
// uses every token; embedding models trained on the last token (Qwen3-Embedding) say so.
enum class Pooling { kMean, kFirst, kLast };

// Rope context extension ("<arch>.rope.scaling.type"): none, linear (positions divided by
// the factor) or YaRN (model/rope.h: per-frequency interpolation, magnitude correction).
enum class RopeScaling { kNone, kLinear, kYarn };

const char* arch_name(Arch a);

struct HParams {
  Arch arch = Arch::kLlama;
  int64_t n_vocab = 0;
  int64_t dim = 0;  // embedding length
  int64_t n_layers = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;  // key/value length per head (qwen3 may differ from dim / n_heads)
  int64_t ffn_dim = 0;   // FFN columns; in a mixture-of-experts model, those of one expert
  int64_t n_ctx_train = 0;
  int64_t n_rot = 0;  // rotary dimensions per head (<= head_dim)
  float rms_eps = 1e-5f;
  float rope_base = 10000.0f;
  // Rope scaling: its kind and factor (rope.scaling.factor; 1 when none). YaRN also reads
  // the original context (rope.scaling.original_context_length, else context_length), the
  // ramp's rotation counts beta_fast/beta_slow (rope.scaling.yarn_beta_fast/_slow, default
  // 32 and 1) and, for deepseek2 only, rope.scaling.yarn_log_multiplier as GGUF stores it
  // (llama.cpp's converter writes 0.1 x HF's mscale_all_dim): the softmax scale's mscale.
  RopeScaling rope_scaling = RopeScaling::kNone;
  float rope_factor = 1.0f;
  int64_t rope_orig_ctx = 0;
  float yarn_beta_fast = 32.0f;
  float yarn_beta_slow = 1.0f;
  float yarn_log_mul = 0.0f;
  kernels::RopeStyle rope_style = kernels::RopeStyle::kNormal;
  bool has_qkv_bias = false;     // qwen2
  bool has_qk_norm = false;      // qwen3
  bool tied_embeddings = false;  // no output.weight: logits use token_embd
  // Mixture of experts (0 when dense): every layer's FFN is n_expert experts of ffn_dim
  // columns each, of which a router picks n_expert_used per token. Both families route by
  // softmax over all experts, top n_expert_used, weights renormalised to sum to 1.
  int64_t n_expert = 0;
  int64_t n_expert_used = 0;
  Pooling pooling = Pooling::kMean;  // for embeddings only

  // deepseek2 only (zero/default elsewhere). Attention is multi-head latent: head_dim is the
  // key length qk_nope + n_rot (n_rot = qk_rope, the roped part shared by all heads),
  // v_head_dim the value length; keys and values come from a kv_lora_rank latent, queries
  // from a q_lora_rank one (0: attn_q straight from the input). n_kv_heads == n_heads.
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 0;
  int64_t v_head_dim = 0;
  // The first n_leading_dense layers have a dense FFN of dense_ffn_dim columns; the rest
  // are MoE layers with n_expert_shared always-on experts (one FFN of n_expert_shared *
  // ffn_dim columns) besides the routed ones. Routing: gating over the logits; experts
  // chosen by score + exp_probs_b among the best n_expert_groups_used of n_expert_groups
  // groups; weights the unbiased scores, normalised if expert_weights_norm, times
  // expert_weights_scale.
  int64_t n_leading_dense = 0;
  int64_t dense_ffn_dim = 0;
  int64_t n_expert_shared = 0;
  int64_t n_expert_groups = 1;
  int64_t n_expert_groups_used = 1;
  Gating gating = Gating::kSoftmax;
  bool expert_weights_norm = true;
  float expert_weights_scale = 1.0f;

  bool is_moe() const { return n_expert > 0; }
  bool is_mla() const { return arch == Arch::kDeepseek2; }
  bool layer_is_moe(int64_t layer) const { return is_moe() && layer >= n_leading_dense; }
  int64_t qk_nope() const { return head_dim - n_rot; }
  // Columns of attn_output per head: the value length.
  int64_t out_head_dim() const { return is_mla() ? v_head_dim : head_dim; }
  int64_t q_dim() const { return n_heads * head_dim; }
  int64_t kv_dim() const { return n_kv_heads * head_dim; }

  // Reads and validates the metadata and the shapes it implies ("model: <file>: ...").
  static Result<HParams> from_gguf(const format::GgufFile& file);
  // One line for logs and inspect: "llama dim=64 layers=5 heads=8/4 ...".
  std::string summary() const;
};

}  // namespace cohort::model
