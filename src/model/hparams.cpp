#include "model/hparams.h"

#include <algorithm>
#include <cstdio>

namespace cohort::model {

const char* arch_name(Arch a) {
  switch (a) {
    case Arch::kLlama:
      return "llama";
    case Arch::kQwen2:
      return "qwen2";
    case Arch::kQwen3:
      return "qwen3";
    case Arch::kQwen3Moe:
      return "qwen3moe";
    case Arch::kDeepseek2:
      return "deepseek2";
  }
  return "?";
}

namespace {

Status bad(const format::GgufFile& f, const std::string& what) {
  return Status::invalid_argument("model: " + f.name() + ": " + what);
}

// Reads "<arch>.<key>" as a positive integer within [lo, hi].
Result<int64_t> read_int(const format::GgufFile& f, const std::string& arch, const char* key,
                         int64_t lo, int64_t hi, std::optional<int64_t> fallback = std::nullopt) {
  const std::string full = arch + "." + key;
  std::optional<int64_t> v = f.get_int(full);
  if (!v) {
    if (fallback) return *fallback;
    return bad(f, "missing or non-integer metadata key '" + full + "'");
  }
  if (*v < lo || *v > hi) {
    return bad(f, "metadata '" + full + "' = " + std::to_string(*v) + " is outside [" +
                      std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return *v;
}

// Expert counts: required by qwen3moe, optional (Mixtral) for llama, absent elsewhere. A
// qwen3moe expert's width is expert_feed_forward_length (feed_forward_length is that of a
// dense FFN, which no qwen3moe layer has); a Mixtral expert's is feed_forward_length.
Status read_experts(const format::GgufFile& f, const std::string& arch, HParams* hp) {
  constexpr int64_t kMaxExperts = 4096;
  const bool required = hp->arch == Arch::kQwen3Moe || hp->arch == Arch::kDeepseek2;
  if (!required && hp->arch != Arch::kLlama) return Status::ok();
  COHORT_ASSIGN_OR_RETURN(hp->n_expert,
                          read_int(f, arch, "expert_count", 0, kMaxExperts,
                                   required ? std::nullopt : std::optional<int64_t>(0)));
  if (hp->n_expert == 0) {
    if (required) return bad(f, arch + " needs expert_count >= 1");
    return Status::ok();
  }
  COHORT_ASSIGN_OR_RETURN(hp->n_expert_used,
                          read_int(f, arch, "expert_used_count", 1, hp->n_expert));
  if (hp->arch == Arch::kQwen3Moe || hp->arch == Arch::kDeepseek2) {
    hp->dense_ffn_dim = hp->ffn_dim;
    COHORT_ASSIGN_OR_RETURN(hp->ffn_dim,
                            read_int(f, arch, "expert_feed_forward_length", 1, 1 << 20));
  }
  return Status::ok();
}

// llama.cpp's 2025 MLA conversion splits attn_kv_b into per-head attn_k_b/attn_v_b
// (model/weights.h) and rewrites key_length/value_length to the latent's (kv_lora_rank +
// n_rot and kv_lora_rank, as its cache sees them) and head_count_kv to 1, moving the
// per-head lengths to key_length_mla/value_length_mla. Reads the per-head ones from either
// form into head_dim and v_head_dim (n_rot and kv_lora_rank already read).
Status read_mla_head_lengths(const format::GgufFile& f, const std::string& arch, HParams* hp) {
  if (!f.get_int(arch + ".attention.key_length_mla")) {
    if (f.find_tensor("blk.0.attn_k_b.weight")) {
      return bad(f,
                 "attn_k_b without attention.key_length_mla: the per-head key length of "
                 "split attn_k_b/attn_v_b files is unknown");
    }
    COHORT_ASSIGN_OR_RETURN(hp->head_dim, read_int(f, arch, "attention.key_length", 2, 4096));
    COHORT_ASSIGN_OR_RETURN(hp->v_head_dim, read_int(f, arch, "attention.value_length", 1, 4096));
    return Status::ok();
  }
  COHORT_ASSIGN_OR_RETURN(hp->head_dim, read_int(f, arch, "attention.key_length_mla", 2, 4096));
  COHORT_ASSIGN_OR_RETURN(hp->v_head_dim, read_int(f, arch, "attention.value_length_mla", 1, 4096));
  const int64_t latent_k = hp->kv_lora_rank + hp->n_rot;
  COHORT_ASSIGN_OR_RETURN(int64_t k_len,
                          read_int(f, arch, "attention.key_length", 1, 1 << 17, latent_k));
  COHORT_ASSIGN_OR_RETURN(
      int64_t v_len, read_int(f, arch, "attention.value_length", 1, 1 << 17, hp->kv_lora_rank));
  if (k_len != latent_k || v_len != hp->kv_lora_rank) {
    return bad(f,
               "with key_length_mla, key_length/value_length must be the latent's "
               "(kv_lora_rank + rope dims, kv_lora_rank)");
  }
  return Status::ok();
}

// "<arch>.rope.scaling.*" (after context_length): see HParams::rope_scaling.
Status read_rope_scaling(const format::GgufFile& f, const std::string& arch, HParams* hp) {
  const std::string k = arch + ".rope.scaling.";
  const std::optional<std::string_view> type = f.get_string(k + "type");
  if (!type || *type == "none") return Status::ok();
  if (*type == "linear") {
    hp->rope_scaling = RopeScaling::kLinear;
  } else if (*type == "yarn") {
    hp->rope_scaling = RopeScaling::kYarn;
  } else {
    return Status::unsupported("model: " + f.name() + ": rope scaling '" + std::string(*type) +
                               "' is not supported (none, linear, yarn are)");
  }
  const std::optional<double> factor = f.get_float(k + "factor");
  if (!factor || !(*factor >= 1 && *factor <= 1e4))
    return bad(f, "rope.scaling.factor missing or outside [1, 10000]");
  hp->rope_factor = static_cast<float>(*factor);
  if (hp->rope_scaling != RopeScaling::kYarn) return Status::ok();
  COHORT_ASSIGN_OR_RETURN(
      hp->rope_orig_ctx,
      read_int(f, arch, "rope.scaling.original_context_length", 1, 1 << 24, hp->n_ctx_train));
  auto read_positive = [&](const char* key, float* out) -> Status {
    const std::optional<double> v = f.get_float(k + key);
    if (!v) return Status::ok();
    if (!(*v > 0 && *v < 1e4)) return bad(f, "rope.scaling." + std::string(key) + " out of range");
    *out = static_cast<float>(*v);
    return Status::ok();
  };
  COHORT_RETURN_IF_ERROR(read_positive("yarn_beta_fast", &hp->yarn_beta_fast));
  COHORT_RETURN_IF_ERROR(read_positive("yarn_beta_slow", &hp->yarn_beta_slow));
  if (!(hp->yarn_beta_fast > hp->yarn_beta_slow))
    return bad(f, "rope.scaling.yarn_beta_fast must exceed yarn_beta_slow");
  if (const std::optional<double> m = f.get_float(k + "yarn_log_multiplier")) {
    // Outside deepseek2, llama.cpp reads it with other conventions: refused, not guessed.
    if (hp->arch != Arch::kDeepseek2 && *m != 0)
      return Status::unsupported("model: " + f.name() +
                                 ": rope.scaling.yarn_log_multiplier is supported for "
                                 "deepseek2 only");
    if (!(*m >= 0 && *m < 10)) return bad(f, "rope.scaling.yarn_log_multiplier out of range");
    hp->yarn_log_mul = static_cast<float>(*m);
  }
  return Status::ok();
}

// deepseek2's latent attention and routing keys (after read_experts).
Status read_deepseek2(const format::GgufFile& f, const std::string& arch, HParams* hp) {
  hp->n_kv_heads = hp->n_heads;
  COHORT_ASSIGN_OR_RETURN(hp->n_rot, read_int(f, arch, "rope.dimension_count", 2, 4096));
  COHORT_ASSIGN_OR_RETURN(hp->kv_lora_rank,
                          read_int(f, arch, "attention.kv_lora_rank", 1, 1 << 16));
  COHORT_RETURN_IF_ERROR(read_mla_head_lengths(f, arch, hp));
  if (hp->n_rot >= hp->head_dim) {
    return bad(f, "rope.dimension_count " + std::to_string(hp->n_rot) +
                      " leaves no unroped key dims of " + std::to_string(hp->head_dim));
  }
  COHORT_ASSIGN_OR_RETURN(hp->q_lora_rank,
                          read_int(f, arch, "attention.q_lora_rank", 0, 1 << 16, 0));
  COHORT_ASSIGN_OR_RETURN(hp->n_leading_dense,
                          read_int(f, arch, "leading_dense_block_count", 0, hp->n_layers, 0));
  COHORT_ASSIGN_OR_RETURN(hp->n_expert_shared, read_int(f, arch, "expert_shared_count", 0, 64, 0));
  COHORT_ASSIGN_OR_RETURN(
      hp->n_expert_groups,
      read_int(f, arch, "expert_group_count", 0, std::min(hp->n_expert, kMaxExpertGroups), 1));
  if (hp->n_expert_groups == 0) hp->n_expert_groups = 1;
  COHORT_ASSIGN_OR_RETURN(
      hp->n_expert_groups_used,
      read_int(f, arch, "expert_group_used_count", 0, hp->n_expert_groups, hp->n_expert_groups));
  if (hp->n_expert_groups_used == 0) hp->n_expert_groups_used = hp->n_expert_groups;
  if (hp->n_expert % hp->n_expert_groups != 0) {
    return bad(f, "expert_count is not a multiple of expert_group_count");
  }
  if (hp->n_expert_groups_used * (hp->n_expert / hp->n_expert_groups) < hp->n_expert_used) {
    return bad(f, "expert_group_used_count groups hold fewer experts than expert_used_count");
  }
  COHORT_ASSIGN_OR_RETURN(int64_t gating, read_int(f, arch, "expert_gating_func", 0, 2, 1));
  hp->gating = gating == 2 ? Gating::kSigmoid : Gating::kSoftmax;
  hp->expert_weights_norm = f.get_bool(arch + ".expert_weights_norm").value_or(false);
  if (auto scale = f.get_float(arch + ".expert_weights_scale")) {
    if (!(*scale > 0 && *scale < 1e4)) return bad(f, "expert_weights_scale out of range");
    hp->expert_weights_scale = static_cast<float>(*scale);
  }
  return Status::ok();
}

}  // namespace

Result<HParams> HParams::from_gguf(const format::GgufFile& f) {
  HParams hp;
  std::optional<std::string_view> arch_sv = f.get_string("general.architecture");
  if (!arch_sv) return bad(f, "missing general.architecture");
  const std::string arch(*arch_sv);
  if (arch == "llama") {
    hp.arch = Arch::kLlama;
  } else if (arch == "qwen2") {
    hp.arch = Arch::kQwen2;
  } else if (arch == "qwen3") {
    hp.arch = Arch::kQwen3;
  } else if (arch == "qwen3moe") {
    hp.arch = Arch::kQwen3Moe;
  } else if (arch == "deepseek2") {
    hp.arch = Arch::kDeepseek2;
  } else {
    return Status::unsupported("model: " + f.name() + ": architecture '" + arch +
                               "' is not supported (llama, qwen2, qwen3, qwen3moe, deepseek2 are)");
  }
  constexpr int64_t kMaxDim = 1 << 17, kMaxLayers = 1024, kMaxHeads = 1024;
  COHORT_ASSIGN_OR_RETURN(hp.dim, read_int(f, arch, "embedding_length", 1, kMaxDim));
  COHORT_ASSIGN_OR_RETURN(hp.n_layers, read_int(f, arch, "block_count", 1, kMaxLayers));
  COHORT_ASSIGN_OR_RETURN(hp.ffn_dim, read_int(f, arch, "feed_forward_length", 1, 1 << 20));
  COHORT_ASSIGN_OR_RETURN(hp.n_heads, read_int(f, arch, "attention.head_count", 1, kMaxHeads));
  COHORT_ASSIGN_OR_RETURN(hp.n_kv_heads,
                          read_int(f, arch, "attention.head_count_kv", 1, kMaxHeads, hp.n_heads));
  COHORT_ASSIGN_OR_RETURN(hp.n_ctx_train, read_int(f, arch, "context_length", 1, 1 << 24, 4096));
  if (hp.arch == Arch::kDeepseek2) hp.n_kv_heads = hp.n_heads;  // heads share one latent
  if (hp.n_heads % hp.n_kv_heads != 0) {
    return bad(f, "head_count " + std::to_string(hp.n_heads) +
                      " is not a multiple of head_count_kv " + std::to_string(hp.n_kv_heads));
  }
  const int64_t default_head_dim = hp.dim % hp.n_heads == 0 ? hp.dim / hp.n_heads : 0;
  if (hp.arch != Arch::kDeepseek2) {
    COHORT_ASSIGN_OR_RETURN(
        hp.head_dim,
        read_int(f, arch, "attention.key_length", 1, 4096,
                 default_head_dim ? std::optional<int64_t>(default_head_dim) : std::nullopt));
    COHORT_ASSIGN_OR_RETURN(int64_t v_len,
                            read_int(f, arch, "attention.value_length", 1, 4096, hp.head_dim));
    if (v_len != hp.head_dim)
      return Status::unsupported("model: " + f.name() + ": value_length != key_length");
    COHORT_ASSIGN_OR_RETURN(hp.n_rot,
                            read_int(f, arch, "rope.dimension_count", 2, hp.head_dim, hp.head_dim));
  }

  if (auto eps = f.get_float(arch + ".attention.layer_norm_rms_epsilon")) {
    if (!(*eps > 0 && *eps < 1)) return bad(f, "layer_norm_rms_epsilon out of range");
    hp.rms_eps = static_cast<float>(*eps);
  }
  if (auto base = f.get_float(arch + ".rope.freq_base")) {
    if (!(*base > 1)) return bad(f, "rope.freq_base must be > 1");
    hp.rope_base = static_cast<float>(*base);
  }
  COHORT_RETURN_IF_ERROR(read_rope_scaling(f, arch, &hp));
  // deepseek2 rotates adjacent pairs, as llama does (llama.cpp's rope type "norm").
  hp.rope_style = hp.arch == Arch::kLlama || hp.arch == Arch::kDeepseek2
                      ? kernels::RopeStyle::kNormal
                      : kernels::RopeStyle::kNeox;
  hp.has_qkv_bias = hp.arch == Arch::kQwen2;
  hp.has_qk_norm = hp.arch == Arch::kQwen3 || hp.arch == Arch::kQwen3Moe;
  COHORT_RETURN_IF_ERROR(read_experts(f, arch, &hp));
  if (hp.arch == Arch::kDeepseek2) COHORT_RETURN_IF_ERROR(read_deepseek2(f, arch, &hp));
  if (hp.n_rot % 2 != 0) return bad(f, "rope.dimension_count must be even");

  if (const std::optional<int64_t> v = f.get_int(arch + ".pooling_type")) {
    hp.pooling = *v == 2 ? Pooling::kFirst : *v == 3 ? Pooling::kLast : Pooling::kMean;
  }

  // A shard file (model/shard_export.h) may lack the embeddings: it records what they said.
  if (const std::optional<int64_t> v = f.get_int("cohort.shard.n_vocab")) {
    if (*v < 1) return bad(f, "cohort.shard.n_vocab must be positive");
    hp.n_vocab = *v;
    hp.tied_embeddings = f.get_bool("cohort.shard.tied_embeddings").value_or(false);
    return hp;
  }
  const format::GgufTensorInfo* emb = f.find_tensor("token_embd.weight");
  if (!emb) return bad(f, "missing tensor 'token_embd.weight'");
  if (emb->shape.size() != 2 || emb->shape[0] != hp.dim || emb->shape[1] < 1) {
    return bad(f, "tensor 'token_embd.weight' has the wrong shape for embedding_length " +
                      std::to_string(hp.dim));
  }
  hp.n_vocab = emb->shape[1];
  hp.tied_embeddings = f.find_tensor("output.weight") == nullptr;
  return hp;
}

std::string HParams::summary() const {
  char buf[384];
  std::snprintf(
      buf, sizeof(buf),
      "%s dim=%lld layers=%lld heads=%lld/%lld head_dim=%lld ffn=%lld vocab=%lld "
      "ctx_train=%lld rope=%s/%lld base=%g eps=%g%s%s",
      arch_name(arch), (long long)dim, (long long)n_layers, (long long)n_heads,
      (long long)n_kv_heads, (long long)head_dim, (long long)ffn_dim, (long long)n_vocab,
      (long long)n_ctx_train, rope_style == kernels::RopeStyle::kNeox ? "neox" : "normal",
      (long long)n_rot, rope_base, rms_eps, tied_embeddings ? " tied" : "",
      is_moe()
          ? (" experts=" + std::to_string(n_expert_used) + "/" + std::to_string(n_expert)).c_str()
          : "");
  std::string s = buf;
  if (rope_scaling == RopeScaling::kLinear) {
    std::snprintf(buf, sizeof(buf), " rope_linear=%g", rope_factor);
    s += buf;
  } else if (rope_scaling == RopeScaling::kYarn) {
    std::snprintf(buf, sizeof(buf), " yarn=%g orig_ctx=%lld beta=%g/%g log_mul=%g", rope_factor,
                  (long long)rope_orig_ctx, yarn_beta_fast, yarn_beta_slow, yarn_log_mul);
    s += buf;
  }
  if (is_mla()) {
    std::snprintf(buf, sizeof(buf),
                  " mla q_lora=%lld kv_lora=%lld v_dim=%lld shared=%lld dense_layers=%lld "
                  "dense_ffn=%lld groups=%lld/%lld gating=%s%s scale=%g",
                  (long long)q_lora_rank, (long long)kv_lora_rank, (long long)v_head_dim,
                  (long long)n_expert_shared, (long long)n_leading_dense, (long long)dense_ffn_dim,
                  (long long)n_expert_groups_used, (long long)n_expert_groups,
                  gating == Gating::kSigmoid ? "sigmoid" : "softmax",
                  expert_weights_norm ? " norm" : "", expert_weights_scale);
    s += buf;
  }
  return s;
}

}  // namespace cohort::model
