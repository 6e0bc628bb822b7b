// The forward pass against a deliberately naive re-implementation of each architecture
// (double precision, whole weights dequantized, no KV cache, no kernels table): catches
// mistakes in the semantics (rope pairing, GQA mapping, qwen2 biases, qwen3 Q/K norms,
// tied output, mixture-of-experts routing) rather than in the arithmetic. deepseek2's
// reference expands every cached position's keys and values per head from the latent (the
// textbook form of multi-head latent attention), where the engine attends in the latent
// space with attn_kv_b absorbed: the two must agree.
#include <gtest/gtest.h>

#include <cmath>

#include "comm/communicator.h"
#include "core/rng.h"
#include "format/gguf.h"
#include "model/synth.h"
#include "model/transformer.h"
#include "runtime/generator.h"
#include "support/rope_reference.h"
#include "support/temp_dir.h"
#include "tensor/quantize.h"

namespace cohort {
namespace {

using Vec = std::vector<double>;
using Mat = std::vector<Vec>;  // [rows][cols]

struct Naive {
  const format::GgufFile& f;
  const model::HParams& hp;

  Mat mat(const std::string& name) const {
    const auto* t = f.find_tensor(name);
    EXPECT_NE(t, nullptr) << name;
    const int64_t cols = t->shape[0], rows = t->shape.size() > 1 ? t->shape[1] : 1;
    std::vector<float> row(cols);
    Mat m(rows, Vec(cols));
    for (int64_t r = 0; r < rows; ++r) {
      dequantize_row(t->type, f.tensor_data(*t) + r * row_bytes(t->type, cols), row.data(), cols);
      for (int64_t c = 0; c < cols; ++c) m[r][c] = row[c];
    }
    return m;
  }
  Vec vec(const std::string& name) const { return mat(name)[0]; }
  // Matrix e of a stack of matrices (GGUF shape {cols, rows, n}).
  Mat expert(const std::string& name, int64_t e) const {
    const auto* t = f.find_tensor(name);
    EXPECT_TRUE(t != nullptr && t->shape.size() == 3) << name;
    const int64_t cols = t->shape[0], rows = t->shape[1];
    const uint8_t* base = f.tensor_data(*t) + e * rows * row_bytes(t->type, cols);
    std::vector<float> row(cols);
    Mat m(rows, Vec(cols));
    for (int64_t r = 0; r < rows; ++r) {
      dequantize_row(t->type, base + r * row_bytes(t->type, cols), row.data(), cols);
      for (int64_t c = 0; c < cols; ++c) m[r][c] = row[c];
    }
    return m;
  }
  bool has(const std::string& name) const { return f.find_tensor(name) != nullptr; }

  static Vec matvec(const Mat& w, const Vec& x) {
    Vec y(w.size(), 0.0);
    for (size_t r = 0; r < w.size(); ++r)
      for (size_t c = 0; c < x.size(); ++c) y[r] += w[r][c] * x[c];
    return y;
  }
  Vec rmsnorm(const Vec& x, const Vec& w) const {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double inv = 1.0 / std::sqrt(ss / x.size() + hp.rms_eps);
    Vec y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * w[i];
    return y;
  }
  // Rotates one head in place at position pos.
  void rope(double* h, int64_t pos) const {
    const int64_t half = hp.n_rot / 2;
    const Vec factors = has("rope_freqs.weight") ? vec("rope_freqs.weight") : Vec(half, 1.0);
    for (int64_t i = 0; i < half; ++i) {
      const double theta =
          pos * testing::reference_rope_rate(
                    hp, i, std::pow(double(hp.rope_base), -2.0 * i / hp.n_rot) / factors[i]);
      const double mag = testing::reference_rope_magnitude(hp);
      const int64_t a = hp.rope_style == kernels::RopeStyle::kNeox ? i : 2 * i;
      const int64_t b = hp.rope_style == kernels::RopeStyle::kNeox ? i + half : 2 * i + 1;
      const double x0 = h[a], x1 = h[b];
      h[a] = mag * (x0 * std::cos(theta) - x1 * std::sin(theta));
      h[b] = mag * (x0 * std::sin(theta) + x1 * std::cos(theta));
    }
  }

  // Mixture of experts, Mixtral's formulation: the top-k router logits (sorted by a full
  // sort), then a softmax over those k (the engine computes qwen3moe's softmax over all,
  // renormalised over the k: the same weights).
  void moe_ffn(const std::string& p, std::vector<Vec>& x) const {
    const Mat router = mat(p + "ffn_gate_inp.weight");
    for (Vec& xt : x) {
      const Vec xn = rmsnorm(xt, vec(p + "ffn_norm.weight"));
      const Vec logits = matvec(router, xn);
      std::vector<int64_t> order(logits.size());
      for (size_t e = 0; e < order.size(); ++e) order[e] = e;
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
      double sum = 0;
      for (int64_t j = 0; j < hp.n_expert_used; ++j) sum += std::exp(logits[order[j]]);
      for (int64_t j = 0; j < hp.n_expert_used; ++j) {
        const int64_t e = order[j];
        const double weight = std::exp(logits[e]) / sum;
        const Vec d =
            swiglu(expert(p + "ffn_gate_exps.weight", e), expert(p + "ffn_up_exps.weight", e),
                   expert(p + "ffn_down_exps.weight", e), xn);
        for (int64_t i = 0; i < hp.dim; ++i) xt[i] += weight * d[i];
      }
    }
  }

  void dense_ffn(const std::string& p, std::vector<Vec>& x) const {
    const Mat wg = mat(p + "ffn_gate.weight"), wu = mat(p + "ffn_up.weight"),
              wd = mat(p + "ffn_down.weight");
    for (Vec& xt : x) {
      const Vec d = swiglu(wg, wu, wd, rmsnorm(xt, vec(p + "ffn_norm.weight")));
      for (int64_t i = 0; i < hp.dim; ++i) xt[i] += d[i];
    }
  }

  static Vec swiglu(const Mat& wg, const Mat& wu, const Mat& wd, const Vec& xn) {
    Vec g = matvec(wg, xn);
    const Vec u = matvec(wu, xn);
    for (size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
    return matvec(wd, g);
  }

  // Causal attention of every position's n_heads query heads (keys hd, values vd long; heads
  // h of a group of `group` read KV head h / group), scaled by 1/sqrt(hd) (or YaRN's
  // deepseek2 scale); the output
  // projection wo of the heads' outputs is added to x.
  void attend(const std::vector<Vec>& q, const std::vector<Vec>& k, const std::vector<Vec>& v,
              const Mat& wo, int64_t n_heads, int64_t group, int64_t hd, int64_t vd,
              std::vector<Vec>& x) const {
    for (size_t t = 0; t < x.size(); ++t) {
      Vec att(n_heads * vd, 0.0);
      for (int64_t h = 0; h < n_heads; ++h) {
        const int64_t kvh = h / group;
        Vec s(t + 1);
        double mx = -1e300, sum = 0;
        for (size_t u = 0; u <= t; ++u) {
          double d = 0;
          for (int64_t i = 0; i < hd; ++i) d += q[t][h * hd + i] * k[u][kvh * hd + i];
          s[u] = d * testing::reference_attention_scale(hp);
          mx = std::max(mx, s[u]);
        }
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (size_t u = 0; u <= t; ++u)
          for (int64_t i = 0; i < vd; ++i) att[h * vd + i] += s[u] / sum * v[u][kvh * vd + i];
      }
      const Vec o = matvec(wo, att);
      for (int64_t i = 0; i < hp.dim; ++i) x[t][i] += o[i];
    }
  }

  // deepseek2 attention, naively: per position, K = [kv_b's K rows x latent | k_rope] and
  // V = kv_b's V rows x latent for every head, then ordinary attention.
  void mla_attention(const std::string& p, std::vector<Vec>& x) const {
    const int64_t n = x.size(), hd = hp.head_dim, nope = hp.qk_nope(), vd = hp.v_head_dim;
    const int64_t r = hp.kv_lora_rank, H = hp.n_heads;
    const Mat kv_a = mat(p + "attn_kv_a_mqa.weight"), kv_b = mat(p + "attn_kv_b.weight");
    const Mat wo = mat(p + "attn_output.weight");
    std::vector<Vec> q(n), k(n), v(n);  // [H * hd], [H * hd], [H * vd]
    for (int64_t t = 0; t < n; ++t) {
      const Vec xn = rmsnorm(x[t], vec(p + "attn_norm.weight"));
      if (hp.q_lora_rank > 0) {
        const Vec qa =
            rmsnorm(matvec(mat(p + "attn_q_a.weight"), xn), vec(p + "attn_q_a_norm.weight"));
        q[t] = matvec(mat(p + "attn_q_b.weight"), qa);
      } else {
        q[t] = matvec(mat(p + "attn_q.weight"), xn);
      }
      Vec a = matvec(kv_a, xn);
      const Vec latent = rmsnorm(Vec(a.begin(), a.begin() + r), vec(p + "attn_kv_a_norm.weight"));
      rope(&a[r], t);  // the shared key part
      const Vec kv = matvec(kv_b, latent);
      k[t].assign(H * hd, 0.0);
      v[t].assign(H * vd, 0.0);
      for (int64_t h = 0; h < H; ++h) {
        rope(&q[t][h * hd + nope], t);
        for (int64_t i = 0; i < nope; ++i) k[t][h * hd + i] = kv[h * (nope + vd) + i];
        for (int64_t i = 0; i < hp.n_rot; ++i) k[t][h * hd + nope + i] = a[r + i];
        for (int64_t i = 0; i < vd; ++i) v[t][h * vd + i] = kv[h * (nope + vd) + nope + i];
      }
    }
    attend(q, k, v, wo, H, 1, hd, vd, x);
  }

  // deepseek2's MoE FFN: scores (sigmoid or softmax), experts by full sort of score + bias
  // within the best groups (by the sum of their two best biased scores), weights the
  // unbiased scores normalised and scaled; the shared experts added.
  void deepseek2_moe(const std::string& p, std::vector<Vec>& x) const {
    const Mat router = mat(p + "ffn_gate_inp.weight");
    const Vec bias = vec(p + "exp_probs_b.bias");
    const int64_t E = hp.n_expert, per = E / hp.n_expert_groups;
    for (Vec& xt : x) {
      const Vec xn = rmsnorm(xt, vec(p + "ffn_norm.weight"));
      const Vec logits = matvec(router, xn);
      Vec score(E), choose(E);
      double total = 0;
      for (int64_t e = 0; e < E; ++e) total += std::exp(logits[e]);
      for (int64_t e = 0; e < E; ++e) {
        score[e] = hp.gating == model::Gating::kSigmoid ? 1 / (1 + std::exp(-logits[e]))
                                                        : std::exp(logits[e]) / total;
        choose[e] = score[e] + bias[e];
      }
      std::vector<std::pair<double, int64_t>> groups;
      for (int64_t g = 0; g < hp.n_expert_groups; ++g) {
        Vec in(choose.begin() + g * per, choose.begin() + (g + 1) * per);
        std::sort(in.rbegin(), in.rend());
        groups.push_back({-(in[0] + (per > 1 ? in[1] : 0)), g});
      }
      std::stable_sort(groups.begin(), groups.end());
      for (int64_t j = hp.n_expert_groups_used; j < hp.n_expert_groups; ++j)
        for (int64_t e = groups[j].second * per; e < (groups[j].second + 1) * per; ++e)
          choose[e] = -1e300;
      std::vector<int64_t> order(E);
      for (int64_t e = 0; e < E; ++e) order[e] = e;
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return choose[a] > choose[b]; });
      double sum = 0;
      for (int64_t j = 0; j < hp.n_expert_used; ++j) sum += score[order[j]];
      Vec out = swiglu(mat(p + "ffn_gate_shexp.weight"), mat(p + "ffn_up_shexp.weight"),
                       mat(p + "ffn_down_shexp.weight"), xn);
      for (int64_t j = 0; j < hp.n_expert_used; ++j) {
        const int64_t e = order[j];
        const double weight =
            score[e] / (hp.expert_weights_norm ? sum : 1.0) * hp.expert_weights_scale;
        const Vec d =
            swiglu(expert(p + "ffn_gate_exps.weight", e), expert(p + "ffn_up_exps.weight", e),
                   expert(p + "ffn_down_exps.weight", e), xn);
        for (int64_t i = 0; i < hp.dim; ++i) out[i] += weight * d[i];
      }
      for (int64_t i = 0; i < hp.dim; ++i) xt[i] += out[i];
    }
  }

  // Logits for every position of seq.
  std::vector<Vec> logits(const std::vector<int32_t>& seq) const {
    const int64_t n = seq.size(), hd = hp.head_dim, group = hp.n_heads / hp.n_kv_heads;
    const Mat emb = mat("token_embd.weight");
    std::vector<Vec> x(n);
    for (int64_t t = 0; t < n; ++t) x[t] = emb[seq[t]];
    for (int64_t l = 0; l < hp.n_layers; ++l) {
      const std::string p = "blk." + std::to_string(l) + ".";
      if (hp.is_mla()) {
        mla_attention(p, x);
        if (hp.layer_is_moe(l)) {
          deepseek2_moe(p, x);
          continue;
        }
        dense_ffn(p, x);
        continue;
      }
      const Mat wq = mat(p + "attn_q.weight"), wk = mat(p + "attn_k.weight"),
                wv = mat(p + "attn_v.weight"), wo = mat(p + "attn_output.weight");
      std::vector<Vec> q(n), k(n), v(n);
      for (int64_t t = 0; t < n; ++t) {
        const Vec xn = rmsnorm(x[t], vec(p + "attn_norm.weight"));
        q[t] = matvec(wq, xn);
        k[t] = matvec(wk, xn);
        v[t] = matvec(wv, xn);
        if (has(p + "attn_q.bias")) {
          const Vec bq = vec(p + "attn_q.bias"), bk = vec(p + "attn_k.bias"),
                    bv = vec(p + "attn_v.bias");
          for (size_t i = 0; i < bq.size(); ++i) q[t][i] += bq[i];
          for (size_t i = 0; i < bk.size(); ++i) k[t][i] += bk[i], v[t][i] += bv[i];
        }
        for (int64_t h = 0; h < hp.n_heads; ++h) {
          if (has(p + "attn_q_norm.weight")) {
            Vec head(q[t].begin() + h * hd, q[t].begin() + (h + 1) * hd);
            head = rmsnorm(head, vec(p + "attn_q_norm.weight"));
            std::copy(head.begin(), head.end(), q[t].begin() + h * hd);
          }
          rope(&q[t][h * hd], t);
        }
        for (int64_t h = 0; h < hp.n_kv_heads; ++h) {
          if (has(p + "attn_k_norm.weight")) {
            Vec head(k[t].begin() + h * hd, k[t].begin() + (h + 1) * hd);
            head = rmsnorm(head, vec(p + "attn_k_norm.weight"));
            std::copy(head.begin(), head.end(), k[t].begin() + h * hd);
          }
          rope(&k[t][h * hd], t);
        }
      }
      attend(q, k, v, wo, hp.n_heads, group, hd, hd, x);
      if (hp.is_moe()) {
        moe_ffn(p, x);
        continue;
      }
      dense_ffn(p, x);
    }
    const Mat out = mat(has("output.weight") ? "output.weight" : "token_embd.weight");
    std::vector<Vec> logits(n);
    for (int64_t t = 0; t < n; ++t)
      logits[t] = matvec(out, rmsnorm(x[t], vec("output_norm.weight")));
    return logits;
  }
};

struct Case {
  const char* arch;
  DType type;
  bool tied;
  int64_t head_dim;
  bool llama3_rope = false;
  int64_t n_expert = 0, n_expert_used = 0;
  int64_t q_lora = 0;    // deepseek2
  bool softmax = false;  // deepseek2 gating
  bool yarn = false;     // YaRN rope scaling, factor 8 over 4096 positions (log_mul 0.1)
};

class NaiveForwardTest : public ::testing::TestWithParam<Case> {};

TEST_P(NaiveForwardTest, LogitsMatchNaiveDoublePrecision) {
  const Case c = GetParam();
  testing::TempDir dir;
  model::SynthConfig sc;
  sc.arch = c.arch;
  sc.dim = 64;
  sc.n_layers = 2;
  sc.n_heads = 8;
  sc.n_kv_heads = 2;
  sc.head_dim = c.head_dim;
  sc.ffn_dim = 96;
  sc.n_vocab = 320;
  sc.type = c.type;
  sc.tied_embeddings = c.tied;
  sc.llama3_rope = c.llama3_rope;
  sc.n_expert = c.n_expert;
  sc.n_expert_used = c.n_expert_used;
  sc.expert_ffn_dim = c.n_expert ? 64 : 0;
  // deepseek2: keys of 8 latent-derived + 8 roped dims, values of 12, a latent of 32; layer
  // 0 dense, layer 1 eight experts in 4 groups of which 2 may be chosen, one shared.
  sc.q_lora_rank = c.q_lora;
  sc.kv_lora_rank = 32;
  sc.rope_dim = 8;
  sc.v_dim = 12;
  sc.n_expert_groups = c.n_expert == 8 ? 4 : 1;
  sc.n_expert_groups_used = c.n_expert == 8 ? 2 : 1;
  sc.sigmoid_gating = !c.softmax;
  if (c.yarn) testing::use_test_yarn(sc);
  ASSERT_TRUE(model::write_synthetic_model(sc, dir.file("m.gguf")).is_ok());
  auto file = format::GgufFile::open(dir.file("m.gguf"));
  ASSERT_TRUE(file.is_ok()) << file.status().message();
  auto hp = model::HParams::from_gguf(*file);
  ASSERT_TRUE(hp.is_ok());

  Rng rng(11);
  std::vector<int32_t> seq(24);
  for (auto& id : seq) id = static_cast<int32_t>(rng.next_u64() % sc.n_vocab);
  const std::vector<Vec> want = Naive{*file, *hp}.logits(seq);

  ThreadPool pool(2);
  auto comm = comm::make_local_communicator();
  for (const kernels::KernelTable* kt : kernels::available()) {
    if (!kt) continue;
    SCOPED_TRACE(kt->isa);
    // A batch smaller than the sequence exercises chunked prefill and the cache.
    auto m = model::Transformer::create(*file, model::ShardSpec::whole(*hp), *comm, pool, *kt, 5);
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    auto kv = (*m)->new_cache(64, DType::kF32);
    ASSERT_TRUE(kv.is_ok());
    runtime::Generator gen(**m, *kv, [](int32_t) { return false; });
    std::vector<float> got;
    ASSERT_TRUE(gen.score(seq, &got).is_ok());
    double max_err = 0, max_mag = 0;
    for (size_t t = 0; t < seq.size(); ++t)
      for (int64_t i = 0; i < hp->n_vocab; ++i) {
        max_err = std::max(max_err, std::abs(got[t * hp->n_vocab + i] - want[t][i]));
        max_mag = std::max(max_mag, std::abs(want[t][i]));
      }
    // f32 arithmetic against double: errors of a few ulps per op, summed over 2 layers.
    EXPECT_LT(max_err, 2e-4 * max_mag) << "max |err| " << max_err << " of max |logit| " << max_mag;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Archs, NaiveForwardTest,
    ::testing::Values(Case{"llama", DType::kF32, false, 0}, Case{"llama", DType::kF32, true, 0},
                      Case{"llama", DType::kF32, false, 32, true},
                      Case{"llama", DType::kF16, false, 0}, Case{"qwen2", DType::kF32, false, 0},
                      Case{"qwen3", DType::kF32, false, 16}, Case{"qwen3", DType::kBF16, true, 8},
                      Case{"qwen3moe", DType::kF32, false, 16, false, 8, 2},
                      Case{"qwen3moe", DType::kF16, true, 0, false, 16, 4},
                      Case{"llama", DType::kF32, false, 0, false, 8, 2},
                      Case{"deepseek2", DType::kF32, false, 16, false, 8, 2},
                      Case{"deepseek2", DType::kF32, true, 16, false, 16, 4, 24, true},
                      Case{"deepseek2", DType::kF16, false, 24, false, 8, 3, 32},
                      Case{"llama", DType::kF32, false, 0, false, 0, 0, 0, false, true},
                      Case{"qwen3", DType::kF32, false, 16, false, 0, 0, 0, false, true},
                      Case{"deepseek2", DType::kF32, false, 16, false, 8, 2, 24, false, true}),
    [](const ::testing::TestParamInfo<Case>& p) {
      return std::string(p.param.arch) + "_" + std::string(dtype_name(p.param.type)) +
             (p.param.tied ? "_tied" : "") + "_hd" + std::to_string(p.param.head_dim) +
             (p.param.llama3_rope ? "_rope_freqs" : "") +
             (p.param.q_lora ? "_qlora" + std::to_string(p.param.q_lora) : "") +
             (p.param.softmax ? "_softmax" : "") + (p.param.yarn ? "_yarn" : "") +
             (p.param.n_expert ? "_experts" + std::to_string(p.param.n_expert) + "_top" +
                                     std::to_string(p.param.n_expert_used)
                               : "");
    });

}  // namespace
}  // namespace cohort
