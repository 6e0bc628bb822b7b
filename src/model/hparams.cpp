#include "model/hparams.h"

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
  const bool required = hp->arch == Arch::kQwen3Moe;
  if (!required && hp->arch != Arch::kLlama) return Status::ok();
  COHORT_ASSIGN_OR_RETURN(hp->n_expert,
                          read_int(f, arch, "expert_count", 0, kMaxExperts,
                                   required ? std::nullopt : std::optional<int64_t>(0)));
  if (hp->n_expert == 0) {
    if (required) return bad(f, "qwen3moe needs expert_count >= 1");
    return Status::ok();
  }
  COHORT_ASSIGN_OR_RETURN(hp->n_expert_used,
                          read_int(f, arch, "expert_used_count", 1, hp->n_expert));
  if (hp->arch == Arch::kQwen3Moe) {
    COHORT_ASSIGN_OR_RETURN(hp->ffn_dim,
                            read_int(f, arch, "expert_feed_forward_length", 1, 1 << 20));
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
  } else {
    return Status::unsupported("model: " + f.name() + ": architecture '" + arch +
                               "' is not supported (llama, qwen2, qwen3, qwen3moe are)");
  }
  constexpr int64_t kMaxDim = 1 << 17, kMaxLayers = 1024, kMaxHeads = 1024;
  COHORT_ASSIGN_OR_RETURN(hp.dim, read_int(f, arch, "embedding_length", 1, kMaxDim));
  COHORT_ASSIGN_OR_RETURN(hp.n_layers, read_int(f, arch, "block_count", 1, kMaxLayers));
  COHORT_ASSIGN_OR_RETURN(hp.ffn_dim, read_int(f, arch, "feed_forward_length", 1, 1 << 20));
  COHORT_ASSIGN_OR_RETURN(hp.n_heads, read_int(f, arch, "attention.head_count", 1, kMaxHeads));
  COHORT_ASSIGN_OR_RETURN(hp.n_kv_heads,
                          read_int(f, arch, "attention.head_count_kv", 1, kMaxHeads, hp.n_heads));
  COHORT_ASSIGN_OR_RETURN(hp.n_ctx_train, read_int(f, arch, "context_length", 1, 1 << 24, 4096));
  if (hp.n_heads % hp.n_kv_heads != 0) {
    return bad(f, "head_count " + std::to_string(hp.n_heads) +
                      " is not a multiple of head_count_kv " + std::to_string(hp.n_kv_heads));
  }
  const int64_t default_head_dim = hp.dim % hp.n_heads == 0 ? hp.dim / hp.n_heads : 0;
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
  if (hp.n_rot % 2 != 0) return bad(f, "rope.dimension_count must be even");

  if (auto eps = f.get_float(arch + ".attention.layer_norm_rms_epsilon")) {
    if (!(*eps > 0 && *eps < 1)) return bad(f, "layer_norm_rms_epsilon out of range");
    hp.rms_eps = static_cast<float>(*eps);
  }
  if (auto base = f.get_float(arch + ".rope.freq_base")) {
    if (!(*base > 1)) return bad(f, "rope.freq_base must be > 1");
    hp.rope_base = static_cast<float>(*base);
  }
  if (auto type = f.get_string(arch + ".rope.scaling.type")) {
    if (*type == "linear") {
      auto factor = f.get_float(arch + ".rope.scaling.factor");
      if (!factor || !(*factor >= 1)) return bad(f, "rope.scaling.factor missing or < 1");
      hp.rope_linear_scale = static_cast<float>(*factor);
    } else if (*type != "none") {
      return Status::unsupported("model: " + f.name() + ": rope scaling '" + std::string(*type) +
                                 "' is not supported");
    }
  }
  hp.rope_style = hp.arch == Arch::kLlama ? kernels::RopeStyle::kNormal : kernels::RopeStyle::kNeox;
  hp.has_qkv_bias = hp.arch == Arch::kQwen2;
  hp.has_qk_norm = hp.arch == Arch::kQwen3 || hp.arch == Arch::kQwen3Moe;
  COHORT_RETURN_IF_ERROR(read_experts(f, arch, &hp));

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
  return buf;
}

}  // namespace cohort::model
