// deepseek2 specifics outside the forward pass: its routing (sigmoid scores, bias-driven
// choice limited to the best groups, unbiased normalised and scaled weights), the metadata
// synth writes and HParams reads back, the compressed cache, and clear refusals of what
// is not supported. The forward pass is checked against a naive reference in
// naive_forward_test.cpp and across shardings in sharded_forward_test.cpp.
#include <gtest/gtest.h>

#include <cmath>

#include "comm/communicator.h"
#include "format/gguf.h"
#include "format/gguf_writer.h"
#include "model/moe_ffn.h"
#include "model/synth.h"
#include "model/transformer.h"
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

TEST(Deepseek2, SplitKvBAndBadSynthShapesAreRefusedClearly) {
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

  // A GGUF of the newer layout (key_length_mla, attn_k_b) is refused by name.
  format::GgufWriter w;
  w.set_string("general.architecture", "deepseek2");
  w.set_u32("deepseek2.embedding_length", 64);
  w.set_u32("deepseek2.block_count", 1);
  w.set_u32("deepseek2.feed_forward_length", 96);
  w.set_u32("deepseek2.attention.head_count", 4);
  w.set_u32("deepseek2.attention.key_length_mla", 24);
  const auto bytes = std::make_shared<const std::vector<uint8_t>>(w.write_memory());
  auto f = format::GgufFile::from_bytes("new.gguf", bytes);
  ASSERT_TRUE(f.is_ok());
  auto hp = model::HParams::from_gguf(*f);
  ASSERT_FALSE(hp.is_ok());
  EXPECT_NE(hp.status().message().find("attn_k_b/attn_v_b"), std::string::npos)
      << hp.status().message();
}

}  // namespace
}  // namespace cohort
