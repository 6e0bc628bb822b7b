// cohort synth: write a GGUF with random weights of a chosen shape and type.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/clock.h"
#include "model/synth.h"
#include "tensor/dtype.h"

namespace cohort::cli {
namespace {

struct SynthArgs {
  model::SynthConfig config;
  std::string type = "f32";
  std::string out;
};

int synth(SynthArgs& a) {
  auto type = dtype_from_name(a.type);
  if (!type) {
    std::fprintf(stderr, "error: synth: unknown --type '%s'\n", a.type.c_str());
    return 2;
  }
  a.config.type = *type;
  const double t0 = now_s();
  int last_pct = -1;
  Status s = model::write_synthetic_model(a.config, a.out, [&](int64_t done, int64_t total) {
    const int pct = static_cast<int>(100 * done / total);
    if (pct != last_pct) {
      std::fprintf(stderr, "\rsynth: writing tensors %3d%% (%lld/%lld)", pct,
                   static_cast<long long>(done), static_cast<long long>(total));
      last_pct = pct;
    }
  });
  std::fprintf(stderr, "\n");
  if (!s.is_ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  std::fprintf(stderr, "synth: wrote %s (%s, random weights) in %.2f s\n", a.out.c_str(),
               a.type.c_str(), now_s() - t0);
  return 0;
}

}  // namespace

void add_synth_command(CLI::App& app, Runner* runner) {
  auto a = std::make_shared<SynthArgs>();
  model::SynthConfig& c = a->config;
  CLI::App* cmd = app.add_subcommand("synth", "Write a GGUF model with random weights");
  cmd->add_option("--arch", c.arch, "Architecture")
      ->check(CLI::IsMember({"llama", "qwen2", "qwen3", "qwen3moe", "deepseek2"}));
  cmd->add_option("--dim", c.dim, "Embedding length");
  cmd->add_option("--layers", c.n_layers, "Transformer blocks");
  cmd->add_option("--heads", c.n_heads, "Attention heads");
  cmd->add_option("--kv-heads", c.n_kv_heads, "Key/value heads");
  cmd->add_option("--head-dim", c.head_dim, "Head dimension (default dim/heads)");
  cmd->add_option("--ffn", c.ffn_dim, "Feed-forward length");
  cmd->add_option("--experts", c.n_expert,
                  "Experts per layer (qwen3moe; llama with experts is Mixtral style)");
  cmd->add_option("--experts-used", c.n_expert_used, "Experts each token is routed to");
  cmd->add_option("--expert-ffn", c.expert_ffn_dim, "Feed-forward length of one expert");
  cmd->add_option("--q-lora", c.q_lora_rank, "deepseek2: query latent rank (0: no compression)");
  cmd->add_option("--kv-lora", c.kv_lora_rank, "deepseek2: key/value latent rank (cached)");
  cmd->add_option("--rope-dim", c.rope_dim,
                  "deepseek2: roped dims of each key (shared by the heads; default head-dim/2)");
  cmd->add_option("--v-dim", c.v_dim, "deepseek2: value length per head (default head-dim)");
  cmd->add_option("--shared-experts", c.n_shared_experts, "deepseek2: always-on experts");
  cmd->add_option("--dense-layers", c.n_dense_layers, "deepseek2: leading layers with dense FFN");
  cmd->add_option("--expert-groups", c.n_expert_groups, "deepseek2: expert groups");
  cmd->add_option("--expert-groups-used", c.n_expert_groups_used,
                  "deepseek2: groups the router may choose from per token");
  cmd->add_flag("!--softmax-gating", c.sigmoid_gating,
                "deepseek2: softmax router scores (V2) instead of sigmoid (V3)");
  cmd->add_option("--rope-scaling", c.rope_scaling,
                  "Rope scaling metadata: none, linear or yarn (needs --rope-factor)")
      ->check(CLI::IsMember({"none", "linear", "yarn"}));
  cmd->add_option("--rope-factor", c.rope_factor, "Rope scaling factor (context extension)");
  cmd->add_option("--rope-orig-ctx", c.rope_orig_ctx,
                  "yarn: original context length (default ctx / factor)");
  cmd->add_option("--yarn-log-mul", c.yarn_log_mul,
                  "deepseek2 yarn: rope.scaling.yarn_log_multiplier (V3 and K2: 0.1)");
  cmd->add_flag("--split-kv-b", c.split_kv_b,
                "deepseek2: per-head attn_k_b/attn_v_b (llama.cpp's 2025 conversion) instead of "
                "attn_kv_b");
  cmd->add_option("--vocab", c.n_vocab, "Vocabulary size");
  cmd->add_option("--ctx", c.n_ctx, "Trained context length");
  cmd->add_option("--type", a->type,
                  "Weight type: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q2_K..q6_K");
  cmd->add_flag("--tied", c.tied_embeddings, "Tie the output projection to the embeddings");
  cmd->add_option("--seed", c.seed, "Random seed");
  cmd->add_option("-o,--output", a->out, "Output file")->required();
  cmd->callback([a, runner] { *runner = [a] { return synth(*a); }; });
}

}  // namespace cohort::cli
