#include "cluster/planner.h"

#include <gtest/gtest.h>

namespace cohort::cluster {
namespace {

ModelDesc toy(int64_t layers = 8, int64_t heads = 8, int64_t kv = 4, int64_t ffn = 256) {
  ModelDesc d;
  d.hp.n_layers = layers;
  d.hp.n_heads = heads;
  d.hp.n_kv_heads = kv;
  d.hp.head_dim = 16;
  d.hp.dim = heads * 16;
  d.hp.ffn_dim = ffn;
  d.hp.n_vocab = 1000;
  d.layer_bytes = 1 << 20;
  d.embed_bytes = 1 << 20;
  d.output_bytes = 1 << 20;
  d.kv_bytes_per_token_per_layer = 2 * kv * 16 * 2;
  return d;
}

std::vector<NodeDesc> nodes(int n, uint64_t mem = 1ull << 30) {
  return std::vector<NodeDesc>(n, NodeDesc{"n", mem, 1.0});
}

TEST(SplitRange, ProportionalAlignedNonEmpty) {
  auto r = split_range(10, 1, {1, 1, 1});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->front().first, 0);
  EXPECT_EQ(r->back().second, 10);
  for (auto [b, e] : *r) EXPECT_GE(e - b, 3);
  auto a = split_range(256, 32, {3, 1});
  ASSERT_TRUE(a.is_ok());
  using Range = std::pair<int64_t, int64_t>;
  EXPECT_EQ((*a)[0], Range(0, 192));
  EXPECT_EQ((*a)[1], Range(192, 256));
  EXPECT_FALSE(split_range(64, 32, {1, 1, 1}).is_ok());  // 2 units for 3 parts
}

// Measurements wobble between runs; the placement must not (a worker's cached shard is only
// reusable when its shard is the same), yet a node twice as fast still gets more.
TEST(Planner, SmallMeasurementNoiseKeepsThePlanMaterialDifferencesChangeIt) {
  for (ParallelMode mode : {ParallelMode::kTensor, ParallelMode::kPipeline}) {
    PlanOptions o;
    o.mode = mode;
    auto a_nodes = nodes(3), b_nodes = nodes(3), fast = nodes(3);
    b_nodes[1].speed = 1.07;
    b_nodes[2].speed = 0.94;
    b_nodes[2].free_bytes = b_nodes[2].free_bytes / 100 * 96;
    fast[2].speed = 2.0;
    auto a = plan_placement(a_nodes, LinkMatrix::uniform(3, 10, 1e9), toy(), o);
    auto b = plan_placement(b_nodes, LinkMatrix::uniform(3, 10, 1e9), toy(), o);
    auto f = plan_placement(fast, LinkMatrix::uniform(3, 10, 1e9), toy(), o);
    ASSERT_TRUE(a.is_ok() && b.is_ok() && f.is_ok());
    for (int r = 0; r < 3; ++r) EXPECT_TRUE(a->ranks[r].shard == b->ranks[r].shard) << r;
    EXPECT_FALSE(a->ranks[2].shard == f->ranks[2].shard);
    o.even_shares = true;  // ...unless asked to share evenly
    auto e = plan_placement(fast, LinkMatrix::uniform(3, 10, 1e9), toy(), o);
    ASSERT_TRUE(e.is_ok());
    for (int r = 0; r < 3; ++r) EXPECT_TRUE(a->ranks[r].shard == e->ranks[r].shard) << r;
  }
}

TEST(Planner, TensorSplitsHeadsOnGroupsAndCoversEverything) {
  PlanOptions o;
  o.mode = ParallelMode::kTensor;
  auto p = plan_placement(nodes(3), LinkMatrix::uniform(3, 10, 1e9), toy(), o);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  ASSERT_EQ(p->ranks.size(), 3u);
  EXPECT_EQ(p->n_stages(), 1);
  int64_t heads = 0, ffn = 0;
  for (const RankPlan& r : p->ranks) {
    EXPECT_EQ(r.shard.head_begin % 2, 0);  // GQA groups of 2
    EXPECT_TRUE(r.shard.embeds && r.shard.outputs);
    EXPECT_EQ(r.shard.n_layers(), 8);
    heads += r.shard.n_heads();
    ffn += r.shard.n_ffn();
  }
  EXPECT_EQ(heads, 8);
  EXPECT_EQ(ffn, 256);
}

TEST(Planner, MoreRanksThanKvHeadsReplicatesKv) {
  PlanOptions o;
  o.mode = ParallelMode::kTensor;
  auto p = plan_placement(nodes(4), LinkMatrix::uniform(4, 10, 1e9), toy(8, 8, 2), o);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  for (const RankPlan& r : p->ranks) EXPECT_EQ(r.shard.n_heads(), 2);
}

TEST(Planner, PipelineStagesAreContiguousAndSizedByMemory) {
  PlanOptions o;
  o.mode = ParallelMode::kPipeline;
  auto ns = nodes(2);
  ns[1].free_bytes = 3 * ns[0].free_bytes;
  auto p = plan_placement(ns, LinkMatrix::uniform(2, 10, 1e9), toy(8), o);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->ranks[0].shard.layer_begin, 0);
  EXPECT_EQ(p->ranks[0].shard.layer_end, p->ranks[1].shard.layer_begin);
  EXPECT_EQ(p->ranks[1].shard.layer_end, 8);
  EXPECT_LT(p->ranks[0].shard.n_layers(), p->ranks[1].shard.n_layers());
  EXPECT_TRUE(p->ranks[0].shard.embeds && !p->ranks[0].shard.outputs);
  EXPECT_TRUE(!p->ranks[1].shard.embeds && p->ranks[1].shard.outputs);
}

TEST(Planner, HybridTwoByTwo) {
  PlanOptions o;
  o.mode = ParallelMode::kHybrid;
  auto p = plan_placement(nodes(4), LinkMatrix::uniform(4, 10, 1e9), toy(), o);
  ASSERT_TRUE(p.is_ok());
  ASSERT_EQ(p->n_stages(), 2);
  EXPECT_EQ(p->stage_ranks[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(p->stage_ranks[1], (std::vector<int>{2, 3}));
}

TEST(Planner, AutoPicksTensorOnFastLinksAndPipelineOnSlowOnes) {
  PlanOptions o;
  o.compute_s_per_token = 0.050;  // 50 ms of compute per token on one node
  auto fast = plan_placement(nodes(2), LinkMatrix::uniform(2, 3, 1e10), toy(80), o);
  ASSERT_TRUE(fast.is_ok());
  EXPECT_EQ(fast->mode, ParallelMode::kTensor) << fast->why;
  // 160 all-reduces x 300 us = 48 ms of waiting: more than the 25 ms tensor parallelism saves.
  auto slow = plan_placement(nodes(2), LinkMatrix::uniform(2, 300, 1e9), toy(80), o);
  ASSERT_TRUE(slow.is_ok());
  EXPECT_EQ(slow->mode, ParallelMode::kPipeline) << slow->why;
  EXPECT_NE(slow->why.find("ms/token"), std::string::npos);
}

TEST(Planner, RefusesWhatDoesNotFitOrCannotSplit) {
  PlanOptions o;
  o.mode = ParallelMode::kPipeline;
  EXPECT_EQ(
      plan_placement(nodes(2, 1 << 20), LinkMatrix::uniform(2, 1, 1e9), toy(), o).status().code(),
      StatusCode::kOutOfRange);
  o.mode = ParallelMode::kTensor;
  ModelDesc d = toy();
  d.head_align = 8;  // e.g. q4_K attn_output with head_dim 32: 8 heads per block boundary
  EXPECT_FALSE(plan_placement(nodes(2), LinkMatrix::uniform(2, 1, 1e9), d, o).is_ok());
  o.mode = ParallelMode::kPipeline;
  EXPECT_FALSE(plan_placement(nodes(9), LinkMatrix::uniform(9, 1, 1e9), toy(8), o).is_ok());
}

// A mixture of experts: 8 experts of 256 columns, top 2, experts 3/4 of each layer's bytes.
ModelDesc toy_moe() {
  ModelDesc d = toy();
  d.hp.n_expert = 8;
  d.hp.n_expert_used = 2;
  d.layer_bytes = 4 << 20;
  d.expert_bytes = 3 << 20;
  return d;
}

TEST(Planner, ExpertModeSpreadsWholeExpertsByMemoryAndSaysSo) {
  PlanOptions o;
  o.mode = ParallelMode::kExpert;
  auto ns = nodes(3);
  ns[2].free_bytes *= 2;  // twice the memory: about twice the experts
  auto p = plan_placement(ns, LinkMatrix::uniform(3, 10, 1e9), toy_moe(), o);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->mode, ParallelMode::kExpert);
  ASSERT_EQ(p->n_stages(), 1);
  int64_t next = 0;
  for (const RankPlan& r : p->ranks) {
    EXPECT_EQ(r.shard.expert_begin, next);
    EXPECT_EQ(r.shard.n_ffn(), 256) << "experts are whole";
    next = r.shard.expert_end;
  }
  EXPECT_EQ(next, 8);
  EXPECT_GT(p->ranks[2].shard.n_experts(), p->ranks[0].shard.n_experts());
  EXPECT_NE(p->why.find("expert parallel"), std::string::npos) << p->why;
  EXPECT_NE(p->to_string().find("experts [0,"), std::string::npos) << p->to_string();
  // More ranks than experts, and a dense model, are refused with a reason.
  ModelDesc wide = toy_moe();
  wide.hp.n_heads = 32;  // enough heads for 9 ranks: the experts are what runs out
  auto many = plan_placement(nodes(9), LinkMatrix::uniform(9, 10, 1e9), wide, o);
  ASSERT_FALSE(many.is_ok());
  EXPECT_NE(many.status().message().find("only 8 experts"), std::string::npos)
      << many.status().message();
  auto dense = plan_placement(nodes(2), LinkMatrix::uniform(2, 10, 1e9), toy(), o);
  ASSERT_FALSE(dense.is_ok());
  EXPECT_NE(dense.status().message().find("dense"), std::string::npos);
}

TEST(Planner, TensorModeSlicesEveryExpertAndAutoExplainsIt) {
  PlanOptions o;
  o.mode = ParallelMode::kAuto;
  auto p = plan_placement(nodes(2), LinkMatrix::uniform(2, 5, 1e9), toy_moe(), o);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->mode, ParallelMode::kTensor);
  for (const RankPlan& r : p->ranks) {
    EXPECT_EQ(r.shard.expert_begin, 0);
    EXPECT_EQ(r.shard.expert_end, 8);
    EXPECT_EQ(r.shard.n_ffn(), 128);
  }
  EXPECT_NE(p->why.find("8 experts each sliced by FFN columns"), std::string::npos) << p->why;
  // Only the active experts count towards a token's compute.
  EXPECT_EQ(toy_moe().active_layer_bytes(), (1u << 20) + (3u << 20) / 4);
  auto mode = parse_parallel_mode("expert");
  ASSERT_TRUE(mode.is_ok());
  EXPECT_EQ(*mode, ParallelMode::kExpert);
}

// With many routed experts per rank (top-8 on 2 nodes), auto places whole experts per rank;
// with few (top-2, above) it slices them.
TEST(Planner, AutoPrefersWholeExpertsWhenManyAreRoutedPerRank) {
  PlanOptions o;
  o.mode = ParallelMode::kAuto;
  ModelDesc wide = toy_moe();
  wide.hp.n_expert = 64;
  wide.hp.n_expert_used = 8;
  auto p = plan_placement(nodes(2), LinkMatrix::uniform(2, 5, 1e9), wide, o);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->mode, ParallelMode::kExpert) << p->why;
  EXPECT_NE(p->why.find("(faster)"), std::string::npos) << p->why;
  // On 3 nodes, 8 routed experts are fewer than 4 per rank: sliced again.
  auto q = plan_placement(nodes(3), LinkMatrix::uniform(3, 5, 1e9), wide, o);
  ASSERT_TRUE(q.is_ok()) << q.status().message();
  EXPECT_EQ(q->mode, ParallelMode::kTensor) << q->why;
}

TEST(Planner, LatentCacheIsWholeOnEveryTensorRank) {
  // deepseek2 caches one latent row per token that every rank computes and keeps, where
  // other models' ranks keep their KV heads' share.
  PlanOptions o;
  o.mode = ParallelMode::kTensor;
  o.n_ctx = 1000;
  o.n_slots = 1;
  ModelDesc gqa = toy(8, 8, 8);
  ModelDesc mla = gqa;
  mla.hp.arch = model::Arch::kDeepseek2;
  auto a = plan_placement(nodes(2), LinkMatrix::uniform(2, 10, 1e9), gqa, o);
  auto b = plan_placement(nodes(2), LinkMatrix::uniform(2, 10, 1e9), mla, o);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  const uint64_t half_cache = gqa.kv_bytes_per_token_per_layer * 8 * 1000 / 2;
  for (int r = 0; r < 2; ++r) EXPECT_EQ(b->rank_bytes[r], a->rank_bytes[r] + half_cache);
}

}  // namespace
}  // namespace cohort::cluster
