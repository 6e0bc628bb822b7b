// Hyper-parameters of a decoder-only transformer, read from GGUF metadata
// ("<arch>.embedding_length", ...) for the architectures we run: llama (Llama 2/3.x,
// Mistral, TinyLlama, stories; with "<arch>.expert_count" > 0 Mixtral-style mixture of
// experts), qwen2 (QKV bias), qwen3 (per-head Q/K RMS norm), qwen3moe (qwen3 attention,
// every FFN a mixture of experts).
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "format/gguf.h"
#include "kernels/kernels.h"

namespace cohort::model {

enum class Arch { kLlama, kQwen2, kQwen3, kQwen3Moe };

// How an embedding pools the per-token hidden states: GGUF "<arch>.pooling_type" (llama.cpp's
// numbering: 1 mean, 2 cls, 3 last). Generative models carry none: they get the mean, which
// uses every token; embedding models trained on the last token (Qwen3-Embedding) say so.
enum class Pooling { kMean, kFirst, kLast };

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
  float rope_linear_scale = 1.0f;  // "linear" rope scaling: positions divided by this
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

  bool is_moe() const { return n_expert > 0; }
  int64_t q_dim() const { return n_heads * head_dim; }
  int64_t kv_dim() const { return n_kv_heads * head_dim; }

  // Reads and validates the metadata and the shapes it implies ("model: <file>: ...").
  static Result<HParams> from_gguf(const format::GgufFile& file);
  // One line for logs and inspect: "llama dim=64 layers=5 heads=8/4 ...".
  std::string summary() const;
};

}  // namespace cohort::model
