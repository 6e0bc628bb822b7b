// Rope rates, magnitudes and softmax scales against an independent double-precision
// evaluation of the YaRN formulas (model/rope.h states them), for settings of real models
// (DeepSeek V3: factor 40 over 4096 positions, 64 roped dims; Kimi K2: factor 32, base
// 50000; a Qwen-style 4x over 32768 of 128 dims) and small ones; and the GGUF keys.
#include <gtest/gtest.h>

#include <cmath>

#include "format/gguf.h"
#include "format/gguf_writer.h"
#include "model/rope.h"
#include "model/synth.h"
#include "support/metadata_gguf.h"
#include "support/rope_reference.h"
#include "support/temp_dir.h"

namespace cohort {
namespace {

model::HParams yarn(model::Arch arch, int64_t n_rot, double base, double factor, int64_t orig) {
  model::HParams hp;
  hp.arch = arch;
  hp.n_rot = n_rot;
  hp.head_dim = arch == model::Arch::kDeepseek2 ? n_rot + 128 : n_rot;
  hp.rope_base = static_cast<float>(base);
  hp.rope_scaling = model::RopeScaling::kYarn;
  hp.rope_factor = static_cast<float>(factor);
  hp.rope_orig_ctx = orig;
  return hp;
}

double reference_rate(const model::HParams& hp, int64_t i) {
  return testing::reference_rope_rate(hp, i, std::pow(double(hp.rope_base), -2.0 * i / hp.n_rot));
}

struct Setting {
  const char* name;
  model::Arch arch;
  int64_t n_rot;
  double base, factor;
  int64_t orig;
};

TEST(Rope, YarnRatesMatchTheFormulasInDouble) {
  const Setting settings[] = {
      {"deepseek_v3", model::Arch::kDeepseek2, 64, 10000, 40, 4096},
      {"kimi_k2", model::Arch::kDeepseek2, 64, 50000, 32, 4096},
      {"qwen_4x", model::Arch::kQwen3, 128, 1000000, 4, 32768},
      {"small", model::Arch::kLlama, 8, 10000, 8, 4096},
      {"factor_1", model::Arch::kLlama, 16, 10000, 1, 2048},
  };
  for (const Setting& st : settings) {
    SCOPED_TRACE(st.name);
    const model::HParams hp = yarn(st.arch, st.n_rot, st.base, st.factor, st.orig);
    const std::vector<float> got = model::rope_rates(hp, {});
    ASSERT_EQ(got.size(), size_t(st.n_rot / 2));
    int n_kept = 0, n_interp = 0;
    for (int64_t i = 0; i < st.n_rot / 2; ++i) {
      const double want = reference_rate(hp, i);
      EXPECT_NEAR(got[i], want, 2e-6 * want) << "pair " << i;
      const double w = std::pow(st.base, -2.0 * double(i) / double(st.n_rot));
      n_kept += std::abs(want - w) < 1e-12 * w;
      n_interp += std::abs(want - w / st.factor) < 1e-12 * w;
    }
    if (st.factor > 1) {  // the ramp has both ends in these settings
      EXPECT_GT(n_kept, 0);
      EXPECT_GT(n_interp, 0);
    }
  }
  // DeepSeek V3's correction dims: floor(10.47) = 10 and ceil(22.5) = 23.
  const model::YarnCorrDims c =
      model::yarn_corr_dims(yarn(model::Arch::kDeepseek2, 64, 10000, 40, 4096));
  EXPECT_EQ(c.low, 10);
  EXPECT_EQ(c.high, 23);
}

TEST(Rope, RopeFreqsFactorsDivideBeforeTheBlendAndLinearDividesAll) {
  model::HParams hp = yarn(model::Arch::kLlama, 8, 10000, 8, 4096);
  const std::vector<float> plain = model::rope_rates(hp, {});
  const float factors[4] = {1, 2, 4, 8};
  const std::vector<float> with = model::rope_rates(hp, factors);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(with[i], plain[i] / factors[i], 1e-7 * plain[i]);
  hp.rope_scaling = model::RopeScaling::kLinear;
  const std::vector<float> linear = model::rope_rates(hp, {});
  hp.rope_scaling = model::RopeScaling::kNone;
  const std::vector<float> none = model::rope_rates(hp, {});
  for (int i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(none[i], float(std::pow(10000.0, -2.0 * i / 8)));
    EXPECT_FLOAT_EQ(linear[i], none[i] / 8);
  }
}

TEST(Rope, MagnitudeAndSoftmaxScale) {
  // Outside deepseek2, YaRN scales cos and sin by 1 + 0.1 ln s; the softmax keeps 1/sqrt(d).
  model::HParams q = yarn(model::Arch::kQwen3, 128, 1e6, 4, 32768);
  EXPECT_NEAR(model::rope_magnitude(q), 1 + 0.1 * std::log(4.0), 1e-6);
  EXPECT_NEAR(model::rope_magnitude(q), testing::reference_rope_magnitude(q), 1e-6);
  EXPECT_NEAR(model::attention_scale(q), 1 / std::sqrt(128.0), 1e-8);
  // deepseek2: unit rope, softmax scale (1 + log_mul ln s)^2 / sqrt(192) (V3: ~0.1153).
  model::HParams d = yarn(model::Arch::kDeepseek2, 64, 10000, 40, 4096);
  d.yarn_log_mul = 0.1f;
  const double m = 1 + 0.1 * std::log(40.0);
  EXPECT_EQ(model::rope_magnitude(d), 1.0f);
  EXPECT_NEAR(model::attention_scale(d), m * m / std::sqrt(192.0), 1e-7);
  EXPECT_NEAR(model::attention_scale(d), testing::reference_attention_scale(d), 1e-7);
  d.rope_scaling = model::RopeScaling::kNone;
  EXPECT_EQ(model::attention_scale(d), 1.0f / std::sqrt(192.0f));
}

format::GgufFile llama_with(const std::function<void(format::GgufWriter&)>& add) {
  auto f = testing::metadata_gguf("llama", [&](format::GgufWriter& w) {
    w.set_u32("llama.context_length", 8192);
    w.set_string("llama.rope.scaling.type", "yarn");
    add(w);
  });
  EXPECT_TRUE(f.is_ok());
  return std::move(*f);
}

TEST(Rope, HParamsReadYarnKeysAndRefuseBadOnes) {
  auto hp = model::HParams::from_gguf(llama_with([](format::GgufWriter& w) {
    w.set_f32("llama.rope.scaling.factor", 4);
    w.set_f32("llama.rope.scaling.yarn_beta_fast", 16);
  }));
  ASSERT_TRUE(hp.is_ok()) << hp.status().message();
  EXPECT_EQ(hp->rope_scaling, model::RopeScaling::kYarn);
  EXPECT_EQ(hp->rope_factor, 4.0f);
  EXPECT_EQ(hp->rope_orig_ctx, 8192);  // no original_context_length: context_length
  EXPECT_EQ(hp->yarn_beta_fast, 16.0f);
  EXPECT_EQ(hp->yarn_beta_slow, 1.0f);
  EXPECT_NE(hp->summary().find("yarn=4 orig_ctx=8192"), std::string::npos) << hp->summary();

  auto missing = model::HParams::from_gguf(llama_with([](format::GgufWriter&) {}));
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("rope.scaling.factor"), std::string::npos);
  auto log_mul = model::HParams::from_gguf(llama_with([](format::GgufWriter& w) {
    w.set_f32("llama.rope.scaling.factor", 4);
    w.set_f32("llama.rope.scaling.yarn_log_multiplier", 0.1f);
  }));
  ASSERT_FALSE(log_mul.is_ok());
  EXPECT_NE(log_mul.status().message().find("deepseek2 only"), std::string::npos);
  auto betas = model::HParams::from_gguf(llama_with([](format::GgufWriter& w) {
    w.set_f32("llama.rope.scaling.factor", 4);
    w.set_f32("llama.rope.scaling.yarn_beta_fast", 0.5f);
  }));
  ASSERT_FALSE(betas.is_ok());
  EXPECT_NE(betas.status().message().find("beta_fast"), std::string::npos);
}

TEST(Rope, SynthWritesDeepseek2YarnThatHParamsReads) {
  testing::TempDir dir;
  model::SynthConfig c;
  c.arch = "deepseek2";
  c.dim = 64;
  c.n_heads = 4;
  c.head_dim = 24;
  c.rope_dim = 8;
  c.kv_lora_rank = 32;
  c.n_expert = 4;
  c.n_expert_used = 2;
  c.n_vocab = 320;
  c.n_ctx = 163840;
  c.rope_scaling = "yarn";
  c.rope_factor = 40;
  c.yarn_log_mul = 0.1f;
  ASSERT_TRUE(model::write_synthetic_model(c, dir.file("m.gguf")).is_ok());
  auto f = format::GgufFile::open(dir.file("m.gguf"));
  ASSERT_TRUE(f.is_ok());
  auto hp = model::HParams::from_gguf(*f);
  ASSERT_TRUE(hp.is_ok()) << hp.status().message();
  EXPECT_EQ(hp->rope_scaling, model::RopeScaling::kYarn);
  EXPECT_EQ(hp->rope_factor, 40.0f);
  EXPECT_EQ(hp->rope_orig_ctx, 4096);  // ctx / factor
  EXPECT_FLOAT_EQ(hp->yarn_log_mul, 0.1f);

  c.arch = "llama";  // the log multiplier is deepseek2's
  Status s = model::write_synthetic_model(c, dir.file("bad.gguf"));
  EXPECT_NE(s.message().find("--yarn-log-mul"), std::string::npos) << s.message();
  c.arch = "deepseek2";
  c.rope_factor = 0;
  s = model::write_synthetic_model(c, dir.file("bad.gguf"));
  EXPECT_NE(s.message().find("--rope-factor"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace cohort
