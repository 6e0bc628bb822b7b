// deepseek2 specifics outside the forward pass: its routing (sigmoid scores, bias-driven
// choice limited to the best groups, unbiased normalised and scaled weights), the metadata
// synth writes and HParams reads back (attn_kv_b whole or split into attn_k_b/attn_v_b,
// which give the same logits), the compressed cache, and clear refusals of what is not
// supported. The forward pass is checked against a naive reference in
// naive_forward_test.cpp and across shardings in sharded_forward_test.cpp.
#include <gtest/gtest.h>

#include <cmath>

#include "comm/communicator.h"
#include "format/gguf.h"
#include "format/gguf_writer.h"
#include "model/moe_ffn.h"
#include "model/synth.h"
#include "model/transformer.h"
#include "runtime/generator.h"
#include "support/metadata_gguf.h"
#include "support/rope_reference.h"
#include "support/temp_dir.h"

namespace cohort {
namespace {

model::HParams routing(model::Gating gating, int64_t groups, int64_t groups_used) {
  model::HParams hp;
  hp.arch = model::Arch::kDeepseek2;
  hp.n_expert = 8;
  hp.n_expert_used = 2;
  hp.n_expert_groups = groups;
  hp.n_expert_groups_used = groups_used;
  hp.gating = gating;
  hp.expert_weights_norm = true;
  hp.expert_weights_scale = 2.5f;
  return hp;
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

TEST(RouteDeepseek2, BiasChoosesTheExpertsButTheWeightsAreTheUnbiasedScores) {
  const float logits[8] = {2.0f, 1.0f, 0.0f, -1.0f, 0.5f, 1.5f, -2.0f, 0.2f};
  // Without bias: experts 0 and 5. The bias lifts expert 3 above both.
  const float bias[8] = {0, 0, 0, 2.0f, 0, 0, 0, 0};
  int32_t ids[2];
  float w[2], scratch[16];
  const model::HParams hp = routing(model::Gating::kSigmoid, 1, 1);
  model::route_deepseek2(hp, logits, nullptr, ids, w, scratch);
  EXPECT_EQ(ids[0], 0);
  EXPECT_EQ(ids[1], 5);
  model::route_deepseek2(hp, logits, bias, ids, w, scratch);
  EXPECT_EQ(ids[0], 3);
  EXPECT_EQ(ids[1], 0);
  const double s3 = sigmoid(-1.0), s0 = sigmoid(2.0);
  EXPECT_NEAR(w[0], 2.5 * s3 / (s3 + s0), 1e-6);
  EXPECT_NEAR(w[1], 2.5 * s0 / (s3 + s0), 1e-6);
}

TEST(RouteDeepseek2, ExpertsComeOnlyFromTheBestGroups) {
  // Four groups of two. Group sums of the two best: g0 = 2.0+1.0, g1 = 0.0-1.0,
  // g2 = 0.5+1.9, g3 = -2.0+1.8. With one group allowed, both experts come from g0 even
  // though expert 5 (1.9) and 7 (1.8) beat expert 1 (1.0).
  const float logits[8] = {2.0f, 1.0f, 0.0f, -1.0f, 0.5f, 1.9f, -2.0f, 1.8f};
  int32_t ids[2];
  float w[2], scratch[16];
  model::HParams hp = routing(model::Gating::kSigmoid, 4, 1);
  // Sigmoid keeps the order, so the group sums rank as the logits' do.
  model::route_deepseek2(hp, logits, nullptr, ids, w, scratch);
  EXPECT_EQ(ids[0], 0);
  EXPECT_EQ(ids[1], 1);
  hp.n_expert_groups_used = 2;  // g0 and g2
  model::route_deepseek2(hp, logits, nullptr, ids, w, scratch);
  EXPECT_EQ(ids[0], 0);
  EXPECT_EQ(ids[1], 5);
  hp.n_expert_groups_used = 4;  // no limit
  model::route_deepseek2(hp, logits, nullptr, ids, w, scratch);
  EXPECT_EQ(ids[1], 5);
}

TEST(RouteDeepseek2, SoftmaxScoresWithoutNormalisation) {
  const float logits[8] = {1.0f, 3.0f, 0.0f, 0.0f, 0.0f, 2.0f, 0.0f, 0.0f};
  int32_t ids[2];
  float w[2], scratch[16];
  model::HParams hp = routing(model::Gating::kSoftmax, 1, 1);
  hp.expert_weights_norm = false;
  hp.expert_weights_scale = 1.0f;
  model::route_deepseek2(hp, logits, nullptr, ids, w, scratch);
  double z = 0;
  for (float l : logits) z += std::exp(double(l));
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 5);
  EXPECT_NEAR(w[0], std::exp(3.0) / z, 1e-6);
  EXPECT_NEAR(w[1], std::exp(2.0) / z, 1e-6);
}

model::SynthConfig small_deepseek2() {
  model::SynthConfig c;
  c.arch = "deepseek2";
  c.dim = 64;
  c.n_layers = 3;
  c.n_heads = 4;
  c.head_dim = 24;
  c.rope_dim = 8;
  c.v_dim = 16;
  c.q_lora_rank = 32;
  c.kv_lora_rank = 32;
  c.ffn_dim = 96;
  c.expert_ffn_dim = 32;
  c.n_expert = 8;
  c.n_expert_used = 2;
  c.n_expert_groups = 4;
  c.n_expert_groups_used = 2;
  c.n_shared_experts = 2;
  c.n_dense_layers = 1;
  c.n_vocab = 320;
  return c;
}

TEST(Deepseek2, SynthWritesWhatHParamsReads) {
  testing::TempDir dir;
  ASSERT_TRUE(model::write_synthetic_model(small_deepseek2(), dir.file("m.gguf")).is_ok());
  auto f = format::GgufFile::open(dir.file("m.gguf"));
  ASSERT_TRUE(f.is_ok());
  auto hp = model::HParams::from_gguf(*f);
  ASSERT_TRUE(hp.is_ok()) << hp.status().message();
  EXPECT_TRUE(hp->is_mla());
  EXPECT_EQ(hp->head_dim, 24);
  EXPECT_EQ(hp->n_rot, 8);
  EXPECT_EQ(hp->qk_nope(), 16);
  EXPECT_EQ(hp->v_head_dim, 16);
  EXPECT_EQ(hp->q_lora_rank, 32);
  EXPECT_EQ(hp->kv_lora_rank, 32);
  EXPECT_EQ(hp->n_kv_heads, 4);
  EXPECT_EQ(hp->ffn_dim, 32);
  EXPECT_EQ(hp->dense_ffn_dim, 96);
  EXPECT_EQ(hp->n_expert_shared, 2);
  EXPECT_EQ(hp->n_leading_dense, 1);
  EXPECT_FALSE(hp->layer_is_moe(0));
  EXPECT_TRUE(hp->layer_is_moe(1));
  EXPECT_EQ(hp->n_expert_groups, 4);
  EXPECT_EQ(hp->n_expert_groups_used, 2);
  EXPECT_EQ(hp->gating, model::Gating::kSigmoid);
  EXPECT_TRUE(hp->expert_weights_norm);
  EXPECT_FLOAT_EQ(hp->expert_weights_scale, 2.5f);
  EXPECT_EQ(hp->rope_style, kernels::RopeStyle::kNormal);
  EXPECT_NE(hp->summary().find("mla q_lora=32 kv_lora=32"), std::string::npos) << hp->summary();
}

TEST(Deepseek2, CacheHoldsOnlyTheLatentAndTheSharedRopedKey) {
  testing::TempDir dir;
  ASSERT_TRUE(model::write_synthetic_model(small_deepseek2(), dir.file("m.gguf")).is_ok());
  auto f = format::GgufFile::open(dir.file("m.gguf"));
  ASSERT_TRUE(f.is_ok());
  auto hp = model::HParams::from_gguf(*f);
  ASSERT_TRUE(hp.is_ok());
  ThreadPool pool(1);
  auto comm = comm::make_local_communicator();
  auto m =
      model::Transformer::create(*f, model::ShardSpec::whole(*hp), *comm, pool, kernels::best(), 4);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  auto kv = (*m)->new_cache(100, DType::kF16);
  ASSERT_TRUE(kv.is_ok());
  // (kv_lora 32 + rope 8) f16 values per token and layer, against 2 x 4 heads x 24 for
  // expanded keys and values.
  EXPECT_EQ(kv->row_elems(), 40);
  EXPECT_EQ(kv->bytes(), size_t{3} * 100 * 40 * 2);
  EXPECT_EQ(kv->v(0), nullptr);
}

TEST(Deepseek2, BadSynthShapesAreRefusedClearly) {
  testing::TempDir dir;
  model::SynthConfig c = small_deepseek2();
  c.n_expert_groups_used = 1;  // one group of 2 experts cannot hold 3
  c.n_expert_used = 3;
  Status s = model::write_synthetic_model(c, dir.file("bad.gguf"));
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("--expert-groups-used"), std::string::npos) << s.message();
  c = small_deepseek2();
  c.rope_dim = 24;
  s = model::write_synthetic_model(c, dir.file("bad.gguf"));
  EXPECT_NE(s.message().find("--rope-dim"), std::string::npos) << s.message();
}

// The metadata of a split (key_length_mla) GGUF, with key/value lengths given.
Result<model::HParams> split_hparams(uint32_t key_length, uint32_t value_length, bool mla_keys) {
  auto f = testing::metadata_gguf("deepseek2", [&](format::GgufWriter& w) {
    const std::string k = "deepseek2.";
    w.set_u32(k + "attention.head_count_kv", 1);
    w.set_u32(k + "attention.kv_lora_rank", 32);
    w.set_u32(k + "rope.dimension_count", 8);
    w.set_u32(k + "attention.key_length", key_length);
    w.set_u32(k + "attention.value_length", value_length);
    if (mla_keys) {
      w.set_u32(k + "attention.key_length_mla", 24);
      w.set_u32(k + "attention.value_length_mla", 16);
    }
    w.set_u32(k + "expert_count", 4);
    w.set_u32(k + "expert_used_count", 2);
    w.set_u32(k + "expert_feed_forward_length", 32);
    w.add_tensor_bytes("blk.0.attn_k_b.weight", DType::kF32, {16, 32, 4},
                       std::vector<uint8_t>(16 * 32 * 4 * sizeof(float)));
  });
  if (!f.is_ok()) return f.status();
  return model::HParams::from_gguf(*f);
}

TEST(Deepseek2, SplitKvBMetadataIsReadAndInconsistentOnesRefused) {
  // llama.cpp's split conversion: latent lengths in key_length/value_length, one KV head.
  auto hp = split_hparams(32 + 8, 32, true);
  ASSERT_TRUE(hp.is_ok()) << hp.status().message();
  EXPECT_EQ(hp->head_dim, 24);
  EXPECT_EQ(hp->v_head_dim, 16);
  EXPECT_EQ(hp->qk_nope(), 16);
  EXPECT_EQ(hp->n_kv_heads, 4);
  auto wrong = split_hparams(24, 16, true);  // per-head lengths where the latent's belong
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_NE(wrong.status().message().find("key_length_mla"), std::string::npos)
      << wrong.status().message();
  auto unknown = split_hparams(24, 16, false);  // attn_k_b without the per-head lengths
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_NE(unknown.status().message().find("attn_k_b without"), std::string::npos)
      << unknown.status().message();
}

// Logits of every position of a fixed sequence through a whole model file.
std::vector<float> all_logits(const std::string& path) {
  auto f = format::GgufFile::open(path);
  EXPECT_TRUE(f.is_ok());
  auto hp = model::HParams::from_gguf(*f);
  EXPECT_TRUE(hp.is_ok()) << hp.status().message();
  ThreadPool pool(2);
  auto comm = comm::make_local_communicator();
  auto m =
      model::Transformer::create(*f, model::ShardSpec::whole(*hp), *comm, pool, kernels::best(), 4);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  auto kv = (*m)->new_cache(32, DType::kF32);
  EXPECT_TRUE(kv.is_ok());
  runtime::Generator gen(**m, *kv, [](int32_t) { return false; });
  std::vector<int32_t> seq;
  for (int i = 0; i < 12; ++i) seq.push_back(3 + 23 * i);
  std::vector<float> logits;
  EXPECT_TRUE(gen.score(seq, &logits).is_ok());
  return logits;
}

TEST(Deepseek2, SplitKvBGivesTheLogitsOfTheSameWeightsWhole) {
  for (DType type : {DType::kF32, DType::kF16}) {
    SCOPED_TRACE(dtype_name(type));
    testing::TempDir dir;
    model::SynthConfig c = small_deepseek2();
    c.type = type;
    testing::use_test_yarn(c);
    ASSERT_TRUE(model::write_synthetic_model(c, dir.file("whole.gguf")).is_ok());
    c.split_kv_b = true;
    ASSERT_TRUE(model::write_synthetic_model(c, dir.file("split.gguf")).is_ok());
    auto split = format::GgufFile::open(dir.file("split.gguf"));
    ASSERT_TRUE(split.is_ok());
    EXPECT_EQ(split->find_tensor("blk.0.attn_kv_b.weight"), nullptr);
    const format::GgufTensorInfo* kb = split->find_tensor("blk.0.attn_k_b.weight");
    ASSERT_NE(kb, nullptr);
    EXPECT_EQ(kb->shape, (std::vector<int64_t>{16, 32, 4}));  // {qk_nope, kv_lora, heads}
    EXPECT_EQ(split->find_tensor("blk.0.attn_v_b.weight")->shape,
              (std::vector<int64_t>{32, 16, 4}));  // {kv_lora, v_head, heads}
    const std::vector<float> want = all_logits(dir.file("whole.gguf"));
    const std::vector<float> got = all_logits(dir.file("split.gguf"));
    ASSERT_EQ(got.size(), want.size());
    ASSERT_EQ(got.size(), size_t{12 * 320});
    // The same f32 matrices either way: the same bits.
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << i;
  }
}

}  // namespace
}  // namespace cohort
