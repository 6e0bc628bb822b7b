#include "cluster/model_desc.h"

#include <numeric>
#include <string>

namespace cohort::cluster {

Result<ModelDesc> describe_model(const format::GgufFile& file, DType kv_type) {
  ModelDesc d;
  COHORT_ASSIGN_OR_RETURN(d.hp, model::HParams::from_gguf(file));
  const model::HParams& hp = d.hp;
  uint64_t all_layers = 0, all_experts = 0;
  int64_t attn_block = 1, ffn_block = 1;
  for (const format::GgufTensorInfo& t : file.tensors()) {
    const std::string name(t.name);
    if (name.rfind("blk.", 0) == 0) {
      all_layers += t.bytes;
      if (name.find("_exps.weight") != std::string::npos) all_experts += t.bytes;
      const int64_t block = dtype_info(t.type).block_elems;
      if (name.find(".attn_output.weight") != std::string::npos)
        attn_block = std::max(attn_block, block);
      if (name.find(".ffn_down.weight") != std::string::npos ||
          name.find(".ffn_down_exps.weight") != std::string::npos ||
          name.find(".ffn_down_shexp.weight") != std::string::npos)
        ffn_block = std::max(ffn_block, block);
    } else if (name == "token_embd.weight") {
      d.embed_bytes = t.bytes;
      if (hp.tied_embeddings) d.output_bytes += t.bytes;
    } else if (name == "output.weight" || name == "output_norm.weight") {
      d.output_bytes += t.bytes;
    }
  }
  d.layer_bytes = all_layers / static_cast<uint64_t>(hp.n_layers);
  d.expert_bytes = all_experts / static_cast<uint64_t>(hp.n_layers);
  // A head boundary h must put h * (value length) columns of attn_output on a block boundary.
  d.head_align = attn_block / std::gcd(attn_block, hp.out_head_dim());
  d.ffn_align = ffn_block;
  // deepseek2 caches one latent row per token, whole on every rank. Bytes of n cached
  // elements, rounded up to whole blocks.
  const DTypeInfo& kv = dtype_info(kv_type);
  auto kv_bytes = [&kv](int64_t n) {
    return static_cast<uint64_t>((n + kv.block_elems - 1) / kv.block_elems) * kv.block_bytes;
  };
  d.kv_bytes_per_token_per_layer =
      hp.is_mla() ? kv_bytes(hp.kv_lora_rank + hp.n_rot) : 2 * kv_bytes(hp.kv_dim());
  return d;
}

}  // namespace cohort::cluster
