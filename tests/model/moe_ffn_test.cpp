// Routing of the mixture-of-experts FFN (top-k choice, weights, ties) and the expert-usage
// counters a MoE model keeps. The FFN's arithmetic is checked against a naive reference in
// naive_forward_test.cpp and across shardings in sharded_forward_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "comm/communicator.h"
#include "format/gguf.h"
#include "model/moe_ffn.h"
#include "model/synth.h"
#include "model/transformer.h"
#include "support/temp_dir.h"

namespace cohort {
namespace {

TEST(RouteTopK, PicksTheLargestLogitsBestFirstWithRenormalisedSoftmaxWeights) {
  const float logits[6] = {0.5f, 2.0f, -1.0f, 1.5f, 3.0f, 0.0f};
  int32_t ids[3];
  float w[3];
  model::route_top_k(logits, 6, 3, ids, w);
  EXPECT_EQ(ids[0], 4);
  EXPECT_EQ(ids[1], 1);
  EXPECT_EQ(ids[2], 3);
  // Softmax over the chosen three alone (Mixtral's formulation) gives the same weights.
  const double z = std::exp(3.0) + std::exp(2.0) + std::exp(1.5);
  EXPECT_NEAR(w[0], std::exp(3.0) / z, 1e-6);
  EXPECT_NEAR(w[1], std::exp(2.0) / z, 1e-6);
  EXPECT_NEAR(w[2], std::exp(1.5) / z, 1e-6);
  EXPECT_NEAR(w[0] + w[1] + w[2], 1.0, 1e-6);
}

TEST(RouteTopK, TiesGoToTheLowerExpertAndTopOneWeighsOne) {
  const float logits[4] = {1.0f, 7.0f, 7.0f, 7.0f};
  int32_t ids[2];
  float w[2];
  model::route_top_k(logits, 4, 2, ids, w);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 2);
  EXPECT_FLOAT_EQ(w[0], 0.5f);
  model::route_top_k(logits, 4, 1, ids, w);
  EXPECT_EQ(ids[0], 1);
  EXPECT_FLOAT_EQ(w[0], 1.0f);
}

// A small qwen3moe: 2 layers of 16 experts, 4 used per token.
model::SynthConfig small_moe() {
  model::SynthConfig c;
  c.arch = "qwen3moe";
  c.dim = 64;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.ffn_dim = 128;
  c.expert_ffn_dim = 32;
  c.n_expert = 16;
  c.n_expert_used = 4;
  c.n_vocab = 320;
  return c;
}

TEST(ExpertUsage, CountsEveryRoutedTokenPerLayer) {
  testing::TempDir dir;
  const model::SynthConfig c = small_moe();
  ASSERT_TRUE(model::write_synthetic_model(c, dir.file("m.gguf")).is_ok());
  auto file = format::GgufFile::open(dir.file("m.gguf"));
  ASSERT_TRUE(file.is_ok());
  auto hp = model::HParams::from_gguf(*file);
  ASSERT_TRUE(hp.is_ok()) << hp.status().message();
  EXPECT_EQ(hp->n_expert, 16);
  EXPECT_EQ(hp->n_expert_used, 4);
  EXPECT_EQ(hp->ffn_dim, 32);  // the expert's width, not feed_forward_length
  EXPECT_NE(hp->summary().find("experts=4/16"), std::string::npos) << hp->summary();

  auto comm = comm::make_local_communicator();
  ThreadPool pool(1);
  auto m = model::Transformer::create(*file, model::ShardSpec::whole(*hp), *comm, pool,
                                      kernels::best(), 8);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  auto kv = (*m)->new_cache(16, DType::kF32);
  ASSERT_TRUE(kv.is_ok());
  const int32_t tokens[5] = {1, 40, 41, 42, 43};
  std::vector<float> logits(hp->n_vocab);
  model::ForwardIo io;
  io.tokens = tokens;
  io.logits = logits.data();
  ASSERT_TRUE((*m)->forward(5, 0, *kv, io).is_ok());
  io.tokens = tokens + 1;
  ASSERT_TRUE((*m)->forward(1, 5, *kv, io).is_ok());

  const model::ExpertUsage* u = (*m)->expert_usage();
  ASSERT_NE(u, nullptr);
  ASSERT_EQ(u->n_layers, 2);
  for (int64_t l = 0; l < 2; ++l) {
    uint64_t sum = 0, used = 0;
    for (int64_t e = 0; e < 16; ++e) {
      sum += u->at(l, e);
      used += u->at(l, e) > 0;
    }
    EXPECT_EQ(sum, 6u * 4u) << "layer " << l;  // 6 tokens, 4 experts each
    EXPECT_GE(used, 4u);
  }
}

TEST(MoeModel, BadExpertMetadataIsAClearError) {
  testing::TempDir dir;
  model::SynthConfig c = small_moe();
  c.n_expert = 0;
  // qwen3moe without experts, and more experts used than exist, are refused by synth.
  Status s = model::write_synthetic_model(c, dir.file("m.gguf"));
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("--experts"), std::string::npos) << s.message();
  c.n_expert = 4;
  c.n_expert_used = 5;
  s = model::write_synthetic_model(c, dir.file("m.gguf"));
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("--experts-used"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace cohort
