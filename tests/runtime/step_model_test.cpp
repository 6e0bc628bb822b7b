// The step-time model's fit recovers known coefficients from synthetic samples (exactly
// without noise, closely with noise), holds coefficients the data drive negative at 0, and
// refuses too few samples; the plan facts count syncs and the compute share by hand; the
// projection reproduces the story's arithmetic.
#include "runtime/step_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/rng.h"
#include "runtime/cluster_bench.h"
#include "runtime/step_projection.h"

namespace cohort::runtime {
namespace {

StepModel known_model() {
  StepModel m;
  m.compute_s = 0.040;
  m.fixed_s = 0.002;
  m.latency_factor = 1.0;
  m.transport_latency_us = {{"shm", 8.0}, {"tcp", 35.0}};
  m.s_per_byte = 1.0 / 2e9;
  return m;
}

// A grid like bench cluster's: pipeline and tensor on 2 and 4 nodes, two transports, six
// latencies.
std::vector<StepSample> grid(const StepModel& truth, double noise) {
  Rng rng(7);
  std::vector<StepSample> v;
  for (int nodes : {2, 4})
    for (bool tensor : {false, true})
      for (const char* t : {"tcp", "shm"})
        for (double lat : {0.0, 3.0, 30.0, 100.0, 300.0, 1000.0}) {
          StepSample s;
          s.compute_share = tensor ? 1.0 / nodes : 1.0;
          s.syncs = tensor ? 2 + 2 * 16 : 2 + nodes;
          s.link_latency_us = lat;
          s.transport = t;
          s.bytes = tensor ? 32 * 8192.0 * (nodes - 1) : 128000.0 + 8192.0 * (nodes - 1);
          s.token_s = truth.predict_s(s) * (1 + noise * (2 * rng.uniform() - 1));
          v.push_back(s);
        }
  return v;
}

TEST(StepModel, FitRecoversExactCoefficients) {
  const StepModel truth = known_model();
  auto fit = fit_step_model(grid(truth, 0));
  ASSERT_TRUE(fit.is_ok()) << fit.status().message();
  EXPECT_NEAR(fit->compute_s, truth.compute_s, 1e-9);
  EXPECT_NEAR(fit->fixed_s, truth.fixed_s, 1e-9);
  EXPECT_NEAR(fit->latency_factor, truth.latency_factor, 1e-6);
  EXPECT_NEAR(fit->transport_latency_us.at("tcp"), 35.0, 1e-4);
  EXPECT_NEAR(fit->transport_latency_us.at("shm"), 8.0, 1e-4);
  EXPECT_NEAR(fit->s_per_byte * 2e9, 1.0, 1e-4);
}

TEST(StepModel, FitWithNoiseStaysClose) {
  const StepModel truth = known_model();
  const std::vector<StepSample> samples = grid(truth, 0.02);
  auto fit = fit_step_model(samples);
  ASSERT_TRUE(fit.is_ok()) << fit.status().message();
  EXPECT_NEAR(fit->compute_s, truth.compute_s, 0.1 * truth.compute_s);
  EXPECT_NEAR(fit->latency_factor, 1.0, 0.1);
  for (const StepSample& s : samples) {
    EXPECT_NEAR(fit->predict_s(s) / s.token_s, 1.0, 0.06);
  }
}

TEST(StepModel, NegativeCoefficientIsHeldAtZero) {
  // Times that fall with the bytes: unconstrained least squares would give a negative
  // s_per_byte; the fit holds it at 0 and explains the rest.
  std::vector<StepSample> v;
  for (int i = 0; i < 12; ++i) {
    StepSample s;
    s.compute_share = i % 2 ? 0.5 : 1.0;
    s.syncs = 4 + i;
    s.link_latency_us = 10.0 * i;
    s.transport = "tcp";
    s.bytes = 1000.0 * ((i * 7) % 5);
    s.token_s =
        0.01 * s.compute_share + 0.001 - 1e-7 * s.bytes + s.syncs * 1e-6 * s.link_latency_us;
    v.push_back(s);
  }
  auto fit = fit_step_model(v);
  ASSERT_TRUE(fit.is_ok()) << fit.status().message();
  EXPECT_GE(fit->s_per_byte, 0.0);
  EXPECT_GE(fit->fixed_s, 0.0);
  EXPECT_GE(fit->transport_latency_us.at("tcp"), 0.0);
}

// Two modes on one node count: bytes and per-transport syncs are combinations of the
// compute share and the constant, so they are held at 0 and the rest still fits exactly.
TEST(StepModel, InseparableCoefficientsAreHeldAtZero) {
  StepModel truth = known_model();
  truth.s_per_byte = 0;
  truth.transport_latency_us = {{"shm", 0.0}, {"tcp", 20.0}};
  std::vector<StepSample> v;
  for (const StepSample& s : grid(truth, 0)) {
    if (s.compute_share >= 0.5) v.push_back(s);  // 2 nodes only
  }
  auto fit = fit_step_model(v);
  ASSERT_TRUE(fit.is_ok()) << fit.status().message();
  for (const StepSample& s : v) EXPECT_NEAR(fit->predict_s(s) / s.token_s, 1.0, 1e-6);
  EXPECT_NEAR(fit->latency_factor, 1.0, 1e-6);
}

TEST(StepModel, TooFewSamplesOrNoTimesAreErrors) {
  std::vector<StepSample> v = grid(known_model(), 0);
  v.resize(4);
  EXPECT_FALSE(fit_step_model(v).is_ok());
  v = grid(known_model(), 0);
  v[3].token_s = 0;
  EXPECT_FALSE(fit_step_model(v).is_ok());
}

TEST(LeastSquares, SolvesAndHoldsDependentColumnsAtZero) {
  // y = 2 a + 3 b exactly.
  auto x = least_squares({{1, 0}, {0, 1}, {1, 1}, {2, 1}}, {2, 3, 5, 7});
  ASSERT_TRUE(x.is_ok()) << x.status().message();
  EXPECT_NEAR((*x)[0], 2.0, 1e-9);
  EXPECT_NEAR((*x)[1], 3.0, 1e-9);
  // The second column is twice the first: it is held at 0 and the first explains y.
  auto dep = least_squares({{1, 2}, {2, 4}, {3, 6}}, {1, 2, 3});
  ASSERT_TRUE(dep.is_ok()) << dep.status().message();
  EXPECT_NEAR((*dep)[0], 1.0, 1e-9);
  EXPECT_EQ((*dep)[1], 0.0);
  EXPECT_FALSE(least_squares({{1, 2}}, {1, 2}).is_ok());
}

// A plan of `stages` stages of `per_stage` ranks over n_layers layers, split evenly.
cluster::Plan plan_of(int stages, int per_stage, int64_t n_layers) {
  cluster::Plan p;
  int rank = 0;
  for (int s = 0; s < stages; ++s) {
    std::vector<int> ranks;
    for (int t = 0; t < per_stage; ++t, ++rank) {
      cluster::RankPlan r;
      r.node = rank;
      r.stage = s;
      r.tp_rank = t;
      r.shard.layer_begin = n_layers * s / stages;
      r.shard.layer_end = n_layers * (s + 1) / stages;
      p.ranks.push_back(r);
      ranks.push_back(rank);
    }
    p.stage_ranks.push_back(ranks);
  }
  return p;
}

TEST(PlanFacts, SyncsAndComputeShare) {
  EXPECT_EQ(critical_path_syncs(plan_of(1, 4, 16)), 2 + 2 * 16);             // tensor
  EXPECT_EQ(critical_path_syncs(plan_of(2, 1, 16)), 2 + 1 + 1);              // pipeline of 2
  EXPECT_EQ(critical_path_syncs(plan_of(4, 1, 16)), 2 + 3 + 1);              // pipeline of 4
  EXPECT_EQ(critical_path_syncs(plan_of(2, 2, 16)), 2 + 2 * 8 * 2 + 2 + 1);  // hybrid 2x2
  EXPECT_DOUBLE_EQ(compute_share(plan_of(1, 4, 16)), 0.25);
  EXPECT_DOUBLE_EQ(compute_share(plan_of(4, 1, 16)), 1.0);
  EXPECT_DOUBLE_EQ(compute_share(plan_of(2, 2, 16)), 0.5);
}

TEST(Projection, StoryArithmetic) {
  // 70B q8_0 (75 GB) at 400 GB/s: ~188 ms of compute per token.
  const ProjectionShape s70 = projection_shapes().back();
  EXPECT_EQ(s70.n_layers, 80);
  ProjectionNode node;
  node.link_bytes_per_s = 1e18;  // latency alone
  const double compute = s70.weight_bytes / node.node_bytes_per_s;
  const Projection pipe = project({s70, 4, "pipeline", 300}, node);
  EXPECT_DOUBLE_EQ(pipe.syncs, 6);
  EXPECT_NEAR(pipe.token_s, compute + 6 * 300e-6, 1e-9);
  const Projection ring = project({s70, 4, "tensor-ring", 300}, node);
  EXPECT_DOUBLE_EQ(ring.syncs, 2 + 160 * 6);
  EXPECT_NEAR(ring.token_s, compute / 4 + ring.syncs * 300e-6, 1e-9);
  const Projection one_step = project({s70, 4, "tensor", 300}, node);
  EXPECT_DOUBLE_EQ(one_step.syncs, 2 + 160);
  // The story's order at 300 us: pipeline beats a ring-reduced tensor split.
  EXPECT_LT(pipe.token_s, ring.token_s);
  EXPECT_LT(project({s70, 4, "tensor-ring", 3}, node).token_s, pipe.token_s);
}

}  // namespace
}  // namespace cohort::runtime
