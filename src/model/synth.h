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
  std::string arch = "llama";  // llama | qwen2 | qwen3 | qwen3moe
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
  // Mixture of experts (qwen3moe, or llama as Mixtral): n_expert experts per layer of
  // expert_ffn_dim columns each (0: ffn_dim), n_expert_used per token, a router kept in f32
  // as llama.cpp's quantizer keeps it. qwen3moe needs n_expert >= 1; 0 means dense.
  int64_t n_expert = 0;
  int64_t n_expert_used = 0;
  int64_t expert_ffn_dim = 0;
  uint64_t seed = 1;
};

// Checks the config, then writes the GGUF to path. progress(done, total) is called per
// tensor. A weight whose row length is not a multiple of the type's block falls back to
// q8_0 (or f16) as llama.cpp's quantizer does; the fallback is logged.
Status write_synthetic_model(const SynthConfig& config, const std::string& path,
                             const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace cohort::model
