#include "model/synth.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "core/log.h"
#include "core/rng.h"
#include "format/gguf_writer.h"
#include "tensor/quantize.h"

namespace cohort::model {
namespace {

const char* const kWords[] = {
    "the",    "and",   "was",     "to",   "a",     "he",    "she",   "it",     "they", "in",
    "of",     "is",    "on",      "with", "for",   "that",  "big",   "little", "play", "happy",
    "day",    "one",   "time",    "once", "upon",  "there", "named", "saw",    "said", "wanted",
    "friend", "mom",   "dog",     "cat",  "ball",  "tree",  "park",  "fun",    "went", "what",
    "hello",  "world", "cluster", "node", "model", "token", "fast",  "slow",   "run",  "code",
    "data",   "you",   "I",       "we",   "are",   "be",    "not",   "can",    "do",   "this",
    "have",   "from",  "or",      "but",  "all",   "at",    "by",    "an",     "so",   "if"};

// A SentencePiece-style vocabulary: <unk>, <s>, </s>, the 256 byte tokens, single
// characters, whole words with and without the "▁" prefix, then pairs and triples of
// letters until n_vocab pieces exist. Scores fall with the index, so earlier pieces merge
// first, as in a trained vocabulary.
void make_vocab(int64_t n_vocab, std::vector<std::string>* pieces, std::vector<float>* scores,
                std::vector<int32_t>* types) {
  std::set<std::string> seen;
  auto add = [&](std::string p, int32_t type) {
    if (static_cast<int64_t>(pieces->size()) >= n_vocab || !seen.insert(p).second) return;
    scores->push_back(type == 1 ? -static_cast<float>(pieces->size()) : 0.0f);
    pieces->push_back(std::move(p));
    types->push_back(type);
  };
  add("<unk>", 2);
  add("<s>", 3);
  add("</s>", 3);
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
    add(buf, 6);
  }
  const std::string sp = "\xe2\x96\x81";  // U+2581, SentencePiece's space
  add(sp, 1);
  for (char c = 'a'; c <= 'z'; ++c) add(std::string(1, c), 1);
  for (char c : std::string(".,!?'\"0123456789")) add(std::string(1, c), 1);
  for (char c = 'A'; c <= 'Z'; ++c) add(std::string(1, c), 1);
  for (const char* w : kWords) {
    add(sp + w, 1);
    add(w, 1);
  }
  const std::string letters = "etaoinshrdlcumwfgypbvkjxqz";
  for (char a : letters)
    for (char b : letters) {
      add(std::string{a, b}, 1);
      add(sp + std::string{a, b}, 1);
    }
  for (char a : letters)
    for (char b : letters)
      for (char c : letters) add(std::string{a, b, c}, 1);
  for (int64_t i = 0; static_cast<int64_t>(pieces->size()) < n_vocab; ++i) {
    add(sp + "w" + std::to_string(i), 1);  // filler for very large vocabularies
  }
}

int64_t head_dim_of(const SynthConfig& c) { return c.head_dim ? c.head_dim : c.dim / c.n_heads; }
int64_t rope_dim_of(const SynthConfig& c) {
  return c.rope_dim ? c.rope_dim : head_dim_of(c) / 2 / 2 * 2;
}

Status check_deepseek2(const SynthConfig& c) {
  auto bad = [](const std::string& m) { return Status::invalid_argument("synth: " + m); };
  const int64_t hd = head_dim_of(c), rope = rope_dim_of(c);
  if (rope < 2 || rope % 2 != 0 || rope >= hd)
    return bad("--rope-dim must be even, >= 2 and below the head dimension");
  if (c.kv_lora_rank < 1 || c.q_lora_rank < 0 || c.v_dim < 0)
    return bad("--kv-lora must be >= 1, --q-lora and --v-dim >= 0");
  if (c.n_shared_experts < 0 || c.n_shared_experts > 64)
    return bad("--shared-experts must be within [0, 64]");
  if (c.n_dense_layers < 0 || c.n_dense_layers > c.n_layers)
    return bad("--dense-layers must be within [0, --layers]");
  if (c.n_expert_groups < 1 || c.n_expert_groups > 64 || c.n_expert % c.n_expert_groups != 0)
    return bad("--expert-groups must divide --experts (at most 64 groups)");
  if (c.n_expert_groups_used < 1 || c.n_expert_groups_used > c.n_expert_groups ||
      c.n_expert_groups_used * (c.n_expert / c.n_expert_groups) < c.n_expert_used)
    return bad(
        "--expert-groups-used must be within [1, --expert-groups] and hold "
        "--experts-used experts");
  return Status::ok();
}

Status check_rope_scaling(const SynthConfig& c) {
  auto bad = [](const std::string& m) { return Status::invalid_argument("synth: " + m); };
  if (c.rope_scaling == "none") return Status::ok();
  if (c.rope_scaling != "linear" && c.rope_scaling != "yarn")
    return bad("--rope-scaling must be none, linear or yarn");
  if (!(c.rope_factor >= 1 && c.rope_factor <= 1e4))
    return bad("--rope-factor must be within [1, 10000] with --rope-scaling");
  if (c.rope_orig_ctx < 0) return bad("--rope-orig-ctx must be >= 0");
  if (c.yarn_log_mul < 0 || c.yarn_log_mul >= 10) return bad("--yarn-log-mul must be in [0, 10)");
  if (c.yarn_log_mul != 0 && (c.rope_scaling != "yarn" || c.arch != "deepseek2"))
    return bad("--yarn-log-mul needs --rope-scaling yarn and --arch deepseek2");
  return Status::ok();
}

Status check(const SynthConfig& c) {
  auto bad = [](const std::string& m) { return Status::invalid_argument("synth: " + m); };
  COHORT_RETURN_IF_ERROR(check_rope_scaling(c));
  if (c.arch != "llama" && c.arch != "qwen2" && c.arch != "qwen3" && c.arch != "qwen3moe" &&
      c.arch != "deepseek2")
    return bad("--arch must be llama, qwen2, qwen3, qwen3moe or deepseek2");
  if ((c.arch == "qwen3moe" || c.arch == "deepseek2") && c.n_expert < 1)
    return bad(c.arch + " needs --experts >= 1");
  if (c.n_expert > 0 && c.arch != "llama" && c.arch != "qwen3moe" && c.arch != "deepseek2")
    return bad("--experts needs --arch qwen3moe, deepseek2 or llama (Mixtral style)");
  if (c.arch == "deepseek2") COHORT_RETURN_IF_ERROR(check_deepseek2(c));
  if (c.n_expert < 0 || c.n_expert > 4096) return bad("--experts must be within [0, 4096]");
  if (c.n_expert > 0 && (c.n_expert_used < 1 || c.n_expert_used > c.n_expert))
    return bad("--experts-used must be within [1, --experts]");
  if (c.expert_ffn_dim < 0) return bad("--expert-ffn must be positive");
  if (c.dim < 8 || c.n_layers < 1 || c.n_heads < 1 || c.n_kv_heads < 1 || c.ffn_dim < 1)
    return bad("dimensions must be positive (dim >= 8)");
  if (c.n_heads % c.n_kv_heads != 0) return bad("--heads must be a multiple of --kv-heads");
  const int64_t hd = c.head_dim ? c.head_dim : c.dim / c.n_heads;
  if (!c.head_dim && c.dim % c.n_heads != 0) return bad("--dim must be a multiple of --heads");
  if (hd % 2 != 0) return bad("head dimension must be even (rotary pairs)");
  if (c.n_vocab < 300) return bad("--vocab must be >= 300 (bytes, specials and letters)");
  if (c.n_ctx < 1) return bad("--ctx must be positive");
  if (!dtype_info(c.type).supported || c.type == DType::kQ8_1 || c.type == DType::kQ8_K)
    return bad("unsupported --type " + std::string(dtype_name(c.type)));
  return Status::ok();
}

DType storage_type(DType wanted, int64_t row_len, const std::string& name) {
  if (row_len % dtype_info(wanted).block_elems == 0) return wanted;
  const DType fallback = row_len % 32 == 0 ? DType::kQ8_0 : DType::kF16;
  COHORT_LOG_INFO("synth: %s has rows of %lld, not a multiple of %s blocks: stored as %s",
                  name.c_str(), static_cast<long long>(row_len),
                  std::string(dtype_name(wanted)).c_str(),
                  std::string(dtype_name(fallback)).c_str());
  return fallback;
}

void add_rope_scaling_metadata(const SynthConfig& c, format::GgufWriter& w) {
  if (c.rope_scaling == "none") return;
  const std::string k = c.arch + ".rope.scaling.";
  w.set_string(k + "type", c.rope_scaling);
  w.set_f32(k + "factor", c.rope_factor);
  if (c.rope_scaling != "yarn") return;
  const int64_t orig = c.rope_orig_ctx
                           ? c.rope_orig_ctx
                           : std::max<int64_t>(1, static_cast<int64_t>(c.n_ctx / c.rope_factor));
  w.set_u32(k + "original_context_length", static_cast<uint32_t>(orig));
  if (c.yarn_log_mul != 0) w.set_f32(k + "yarn_log_multiplier", c.yarn_log_mul);
}

void add_deepseek2_metadata(const SynthConfig& c, format::GgufWriter& w) {
  const std::string a = "deepseek2.";
  w.set_u32(a + "attention.q_lora_rank", static_cast<uint32_t>(c.q_lora_rank));
  w.set_u32(a + "attention.kv_lora_rank", static_cast<uint32_t>(c.kv_lora_rank));
  w.set_u32(a + "leading_dense_block_count", static_cast<uint32_t>(c.n_dense_layers));
  w.set_u32(a + "expert_shared_count", static_cast<uint32_t>(c.n_shared_experts));
  w.set_u32(a + "expert_group_count", static_cast<uint32_t>(c.n_expert_groups));
  w.set_u32(a + "expert_group_used_count", static_cast<uint32_t>(c.n_expert_groups_used));
  w.set_u32(a + "expert_gating_func", c.sigmoid_gating ? 2u : 1u);
  w.set_bool(a + "expert_weights_norm", true);
  w.set_f32(a + "expert_weights_scale", 2.5f);
}

}  // namespace

Status write_synthetic_model(const SynthConfig& c, const std::string& path,
                             const std::function<void(int64_t, int64_t)>& progress) {
  COHORT_RETURN_IF_ERROR(check(c));
  const int64_t hd = head_dim_of(c);
  const std::string& a = c.arch;
  format::GgufWriter w;
  w.set_string("general.architecture", a);
  w.set_string("general.name", "cohort synthetic " + a + " (random weights)");
  w.set_u32("general.file_type", static_cast<uint32_t>(c.type));
  w.set_u32(a + ".context_length", static_cast<uint32_t>(c.n_ctx));
  w.set_u32(a + ".embedding_length", static_cast<uint32_t>(c.dim));
  w.set_u32(a + ".block_count", static_cast<uint32_t>(c.n_layers));
  // Mixtral's experts are feed_forward_length wide; qwen3moe names their width apart.
  const bool mixtral = c.n_expert > 0 && a == "llama";
  w.set_u32(a + ".feed_forward_length",
            static_cast<uint32_t>(mixtral && c.expert_ffn_dim ? c.expert_ffn_dim : c.ffn_dim));
  w.set_u32(a + ".attention.head_count", static_cast<uint32_t>(c.n_heads));
  const bool ds2 = a == "deepseek2";
  const bool split = ds2 && c.split_kv_b;
  w.set_u32(a + ".attention.head_count_kv", static_cast<uint32_t>(split ? 1
                                                                  : ds2 ? c.n_heads
                                                                        : c.n_kv_heads));
  const int64_t vd = ds2 && c.v_dim ? c.v_dim : hd;
  if (split) {  // the latent's lengths, as the split conversion's cache sees them
    w.set_u32(a + ".attention.key_length", static_cast<uint32_t>(c.kv_lora_rank + rope_dim_of(c)));
    w.set_u32(a + ".attention.value_length", static_cast<uint32_t>(c.kv_lora_rank));
    w.set_u32(a + ".attention.key_length_mla", static_cast<uint32_t>(hd));
    w.set_u32(a + ".attention.value_length_mla", static_cast<uint32_t>(vd));
  } else if (c.head_dim || ds2) {
    w.set_u32(a + ".attention.key_length", static_cast<uint32_t>(hd));
    w.set_u32(a + ".attention.value_length", static_cast<uint32_t>(vd));
  }
  w.set_u32(a + ".rope.dimension_count", static_cast<uint32_t>(ds2 ? rope_dim_of(c) : hd));
  w.set_f32(a + ".rope.freq_base", a == "llama" || ds2 ? 10000.0f : 1000000.0f);
  w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
  add_rope_scaling_metadata(c, w);
  if (ds2) add_deepseek2_metadata(c, w);
  w.set_u32(a + ".vocab_size", static_cast<uint32_t>(c.n_vocab));
  const bool moe = c.n_expert > 0;
  const int64_t expert_ffn = c.expert_ffn_dim ? c.expert_ffn_dim : c.ffn_dim;
  if (moe) {
    w.set_u32(a + ".expert_count", static_cast<uint32_t>(c.n_expert));
    w.set_u32(a + ".expert_used_count", static_cast<uint32_t>(c.n_expert_used));
    if (a == "qwen3moe" || ds2)
      w.set_u32(a + ".expert_feed_forward_length", static_cast<uint32_t>(expert_ffn));
  }

  std::vector<std::string> pieces;
  std::vector<float> scores;
  std::vector<int32_t> types;
  make_vocab(c.n_vocab, &pieces, &scores, &types);
  w.set_string("tokenizer.ggml.model", "llama");
  w.set_strings("tokenizer.ggml.tokens", pieces);
  w.set_f32s("tokenizer.ggml.scores", scores);
  w.set_i32s("tokenizer.ggml.token_type", types);
  w.set_u32("tokenizer.ggml.bos_token_id", 1);
  w.set_u32("tokenizer.ggml.eos_token_id", 2);
  w.set_u32("tokenizer.ggml.unknown_token_id", 0);
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  w.set_bool("tokenizer.ggml.add_space_prefix", true);

  // Weights ~ N(0, std^2), each tensor from its own seed so files are reproducible and
  // tensors independent of the order they are written in. The output projection is larger
  // than the rest so that logits are peaked (top-1 is meaningful when comparing types).
  // n_seeds numbers the random tensors (a split attn_kv_b is one, written as two).
  int64_t n_tensors = 0, n_seeds = 0, done = 0;
  // n_mats > 0: a stack of n_mats [rows][cols] matrices (a layer's experts).
  auto add_matrix = [&](const std::string& name, int64_t rows, int64_t cols, float stddev,
                        DType type, int64_t n_mats = 0) {
    const DType t = storage_type(type, cols, name);
    ++n_tensors;
    const uint64_t seed = c.seed * 1000003u + static_cast<uint64_t>(n_seeds++);
    std::vector<int64_t> shape{cols, rows};
    if (n_mats) shape.push_back(n_mats);
    const int64_t all_rows = rows * std::max<int64_t>(n_mats, 1);
    w.add_tensor(name, t, shape, [=, &done, &n_tensors, &progress](uint8_t* dst, uint64_t) {
      Rng rng(seed);
      std::vector<float> row(cols);
      const size_t rb = row_bytes(t, cols);
      for (int64_t r = 0; r < all_rows; ++r) {
        for (float& v : row) v = rng.normal() * stddev;
        quantize_row(t, row.data(), dst + r * rb, cols);
      }
      if (progress) progress(++done, n_tensors);
    });
  };
  auto add_vector = [&](const std::string& name, int64_t n, float mean, float spread) {
    ++n_tensors;
    const uint64_t seed = c.seed * 1000003u + static_cast<uint64_t>(n_seeds++);
    w.add_tensor(name, DType::kF32, {n}, [=, &done, &n_tensors, &progress](uint8_t* dst, uint64_t) {
      Rng rng(seed);
      auto* f = reinterpret_cast<float*>(dst);
      for (int64_t i = 0; i < n; ++i) f[i] = mean + spread * rng.uniform_f32(-1.f, 1.f);
      if (progress) progress(++done, n_tensors);
    });
  };

  // attn_kv_b ([heads x (nope + vd)][r], as add_matrix would draw it) split per head into
  // attn_k_b {nope, r, heads} (each head's K rows transposed) and attn_v_b {r, vd, heads}.
  auto add_split_kv_b = [&](const std::string& p, int64_t nope, int64_t vd_, int64_t r,
                            float stddev) {
    const int64_t H = c.n_heads;
    const uint64_t seed = c.seed * 1000003u + static_cast<uint64_t>(n_seeds++);
    auto kv_b = [=] {
      Rng rng(seed);
      std::vector<float> m(H * (nope + vd_) * r);
      for (float& v : m) v = rng.normal() * stddev;
      return m;
    };
    auto write = [&](const std::string& name, int64_t rows, int64_t cols, auto element) {
      const DType t = storage_type(c.type, cols, name);
      ++n_tensors;
      w.add_tensor(name, t, {cols, rows, H},
                   [=, &done, &n_tensors, &progress](uint8_t* dst, uint64_t) {
                     const std::vector<float> kv = kv_b();
                     std::vector<float> row(cols);
                     const size_t rb = row_bytes(t, cols);
                     for (int64_t h = 0; h < H; ++h)
                       for (int64_t i = 0; i < rows; ++i) {
                         for (int64_t j = 0; j < cols; ++j) row[j] = kv[element(h, i, j)];
                         quantize_row(t, row.data(), dst + (h * rows + i) * rb, cols);
                       }
                     if (progress) progress(++done, n_tensors);
                   });
    };
    // kv_b element (row, col) is at row * r + col; head h's rows start at h * (nope + vd).
    write(p + "attn_k_b.weight", r, nope,
          [=](int64_t h, int64_t c_, int64_t i) { return (h * (nope + vd_) + i) * r + c_; });
    write(p + "attn_v_b.weight", vd_, r,
          [=](int64_t h, int64_t j, int64_t c_) { return (h * (nope + vd_) + nope + j) * r + c_; });
  };

  const float s_in = 1.0f / std::sqrt(static_cast<float>(c.dim));
  const float s_ffn = 1.0f / std::sqrt(static_cast<float>(c.ffn_dim));
  const float s_att = 1.0f / std::sqrt(static_cast<float>(c.n_heads * hd));
  add_matrix("token_embd.weight", c.n_vocab, c.dim, 1.0f, c.type);
  if (c.llama3_rope) {
    const float base = a == "llama" ? 10000.0f : 1000000.0f;
    w.add_tensor("rope_freqs.weight", DType::kF32, {hd / 2}, [=](uint8_t* dst, uint64_t) {
      constexpr float kFactor = 8, kLow = 1, kHigh = 4, kOrigCtx = 8192;
      auto* f = reinterpret_cast<float*>(dst);
      for (int64_t i = 0; i < hd / 2; ++i) {
        const float wavelen = 2 * 3.14159265f * std::pow(base, 2.0f * i / hd);
        if (wavelen < kOrigCtx / kHigh) {
          f[i] = 1;
        } else if (wavelen > kOrigCtx / kLow) {
          f[i] = kFactor;
        } else {
          const float smooth = (kOrigCtx / wavelen - kLow) / (kHigh - kLow);
          f[i] = 1 / ((1 - smooth) / kFactor + smooth);
        }
      }
    });
  }
  add_vector("output_norm.weight", c.dim, 1.0f, 0.1f);
  if (!c.tied_embeddings) add_matrix("output.weight", c.n_vocab, c.dim, 4.0f * s_in, c.type);
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    add_vector(p + "attn_norm.weight", c.dim, 1.0f, 0.1f);
    if (ds2) {
      // Latent attention, then a dense FFN or experts with shared ones and a routing bias.
      const int64_t nope = hd - rope_dim_of(c);
      const int64_t r = c.kv_lora_rank, ql = c.q_lora_rank;
      if (ql > 0) {
        add_matrix(p + "attn_q_a.weight", ql, c.dim, s_in, c.type);
        add_vector(p + "attn_q_a_norm.weight", ql, 1.0f, 0.1f);
        add_matrix(p + "attn_q_b.weight", c.n_heads * hd, ql, 1.0f / std::sqrt(float(ql)), c.type);
      } else {
        add_matrix(p + "attn_q.weight", c.n_heads * hd, c.dim, s_in, c.type);
      }
      add_matrix(p + "attn_kv_a_mqa.weight", r + rope_dim_of(c), c.dim, s_in, c.type);
      add_vector(p + "attn_kv_a_norm.weight", r, 1.0f, 0.1f);
      if (split) {
        add_split_kv_b(p, nope, vd, r, 1.0f / std::sqrt(float(r)));
      } else {
        add_matrix(p + "attn_kv_b.weight", c.n_heads * (nope + vd), r, 1.0f / std::sqrt(float(r)),
                   c.type);
      }
      add_matrix(p + "attn_output.weight", c.dim, c.n_heads * vd,
                 1.0f / std::sqrt(float(c.n_heads * vd)), c.type);
      add_vector(p + "ffn_norm.weight", c.dim, 1.0f, 0.1f);
      if (l < c.n_dense_layers) {
        add_matrix(p + "ffn_gate.weight", c.ffn_dim, c.dim, s_in, c.type);
        add_matrix(p + "ffn_up.weight", c.ffn_dim, c.dim, s_in, c.type);
        add_matrix(p + "ffn_down.weight", c.dim, c.ffn_dim, s_ffn, c.type);
        continue;
      }
      const float s_exp = 1.0f / std::sqrt(static_cast<float>(expert_ffn));
      add_matrix(p + "ffn_gate_inp.weight", c.n_expert, c.dim, s_in, DType::kF32);
      add_vector(p + "exp_probs_b.bias", c.n_expert, 0.0f, 0.1f);
      add_matrix(p + "ffn_gate_exps.weight", expert_ffn, c.dim, s_in, c.type, c.n_expert);
      add_matrix(p + "ffn_up_exps.weight", expert_ffn, c.dim, s_in, c.type, c.n_expert);
      add_matrix(p + "ffn_down_exps.weight", c.dim, expert_ffn, s_exp, c.type, c.n_expert);
      if (c.n_shared_experts > 0) {
        const int64_t shared = c.n_shared_experts * expert_ffn;
        add_matrix(p + "ffn_gate_shexp.weight", shared, c.dim, s_in, c.type);
        add_matrix(p + "ffn_up_shexp.weight", shared, c.dim, s_in, c.type);
        add_matrix(p + "ffn_down_shexp.weight", c.dim, shared, s_exp, c.type);
      }
      continue;
    }
    add_matrix(p + "attn_q.weight", c.n_heads * hd, c.dim, s_in, c.type);
    add_matrix(p + "attn_k.weight", c.n_kv_heads * hd, c.dim, s_in, c.type);
    add_matrix(p + "attn_v.weight", c.n_kv_heads * hd, c.dim, s_in, c.type);
    if (a == "qwen2") {
      add_vector(p + "attn_q.bias", c.n_heads * hd, 0.0f, 0.2f);
      add_vector(p + "attn_k.bias", c.n_kv_heads * hd, 0.0f, 0.2f);
      add_vector(p + "attn_v.bias", c.n_kv_heads * hd, 0.0f, 0.2f);
    }
    if (a == "qwen3" || a == "qwen3moe") {
      add_vector(p + "attn_q_norm.weight", hd, 1.0f, 0.1f);
      add_vector(p + "attn_k_norm.weight", hd, 1.0f, 0.1f);
    }
    add_matrix(p + "attn_output.weight", c.dim, c.n_heads * hd, s_att, c.type);
    add_vector(p + "ffn_norm.weight", c.dim, 1.0f, 0.1f);
    if (moe) {
      const float s_exp = 1.0f / std::sqrt(static_cast<float>(expert_ffn));
      add_matrix(p + "ffn_gate_inp.weight", c.n_expert, c.dim, s_in, DType::kF32);
      add_matrix(p + "ffn_gate_exps.weight", expert_ffn, c.dim, s_in, c.type, c.n_expert);
      add_matrix(p + "ffn_up_exps.weight", expert_ffn, c.dim, s_in, c.type, c.n_expert);
      add_matrix(p + "ffn_down_exps.weight", c.dim, expert_ffn, s_exp, c.type, c.n_expert);
      continue;
    }
    add_matrix(p + "ffn_gate.weight", c.ffn_dim, c.dim, s_in, c.type);
    add_matrix(p + "ffn_up.weight", c.ffn_dim, c.dim, s_in, c.type);
    add_matrix(p + "ffn_down.weight", c.dim, c.ffn_dim, s_ffn, c.type);
  }
  return w.write_file(path);
}

}  // namespace cohort::model
