#include "text/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace cohort::text {
namespace {

SamplerConfig plain(float temperature) {
  SamplerConfig c;
  c.temperature = temperature;
  c.top_k = 0;
  c.top_p = 1.0f;
  c.min_p = 0.0f;
  return c;
}

std::vector<float> ramp_logits(int n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> l(n);
  for (float& x : l) x = rng.uniform_f32(-3.0f, 3.0f);
  return l;
}

TEST(Sampler, GreedyPicksArgmaxAndLowestIdOnTies) {
  Sampler s(plain(0.0f), 5);
  std::vector<float> l = {0.1f, 2.0f, -1.0f, 2.0f, 1.9f};
  EXPECT_EQ(s.sample(l.data()), 1);
  l = {-5.0f, -5.0f, -5.0f, -5.0f, -5.0f};
  EXPECT_EQ(s.sample(l.data()), 0);
  l = {-5.0f, -4.0f, -5.0f, 3.0f, -5.0f};
  EXPECT_EQ(s.sample(l.data()), 3);
}

TEST(Sampler, SameSeedSameTokens) {
  SamplerConfig c;  // the defaults: top-k, top-p, min-p and temperature all active
  c.temperature = 1.2f;
  c.seed = 42;
  const int n = 300;
  Sampler a(c, n);
  Sampler b(c, n);
  std::vector<int32_t> ta;
  std::vector<int32_t> tb;
  for (int step = 0; step < 200; ++step) {
    std::vector<float> la = ramp_logits(n, 1000 + step);
    std::vector<float> lb = la;
    ta.push_back(a.sample(la.data()));
    tb.push_back(b.sample(lb.data()));
    a.accept(ta.back());
    b.accept(tb.back());
  }
  EXPECT_EQ(ta, tb);
  // reset() restarts the sequence.
  a.reset();
  std::vector<float> l0 = ramp_logits(n, 1000);
  EXPECT_EQ(a.sample(l0.data()), ta[0]);
  // Another seed gives another sequence (overwhelmingly likely over 200 draws).
  c.seed = 43;
  Sampler d(c, n);
  std::vector<int32_t> td;
  for (int step = 0; step < 200; ++step) {
    std::vector<float> l = ramp_logits(n, 1000 + step);
    td.push_back(d.sample(l.data()));
    d.accept(td.back());
  }
  EXPECT_NE(ta, td);
}

TEST(Sampler, TopKOneIsGreedyAtAnyTemperature) {
  for (float t : {0.5f, 1.0f, 5.0f, 100.0f}) {
    SamplerConfig c = plain(t);
    c.top_k = 1;
    Sampler s(c, 1000);
    for (int step = 0; step < 50; ++step) {
      std::vector<float> l = ramp_logits(1000, step);
      std::vector<float> copy = l;
      Sampler g(plain(0.0f), 1000);
      EXPECT_EQ(s.sample(l.data()), g.sample(copy.data()));
    }
  }
}

TEST(Sampler, TinyTopPIsGreedy) {
  SamplerConfig c = plain(3.0f);
  c.top_p = 1e-6f;
  Sampler s(c, 500);
  for (int step = 0; step < 50; ++step) {
    std::vector<float> l = ramp_logits(500, 77 + step);
    std::vector<float> copy = l;
    Sampler g(plain(0.0f), 500);
    EXPECT_EQ(s.sample(l.data()), g.sample(copy.data()));
  }
}

TEST(Sampler, MinPDropsUnlikelyTokens) {
  SamplerConfig c = plain(1.0f);
  c.min_p = 0.5f;
  Sampler s(c, 3);
  // p(2) / p(0) = e^-3 < 0.5: token 2 may never be drawn; 0 and 1 both are.
  int seen[3] = {0, 0, 0};
  for (int i = 0; i < 2000; ++i) {
    std::vector<float> l = {1.0f, 0.9f, -2.0f};
    ++seen[s.sample(l.data())];
  }
  EXPECT_EQ(seen[2], 0);
  EXPECT_GT(seen[0], 0);
  EXPECT_GT(seen[1], 0);
}

TEST(Sampler, RepetitionPenaltyChangesTheChoice) {
  SamplerConfig c = plain(0.0f);
  c.repeat_penalty = 1.5f;
  Sampler s(c, 4);
  std::vector<float> l = {0.0f, 3.0f, 2.5f, -1.0f};
  EXPECT_EQ(s.sample(l.data()), 1);  // nothing accepted yet
  s.accept(1);
  l = {0.0f, 3.0f, 2.5f, -1.0f};
  EXPECT_EQ(s.sample(l.data()), 2);  // 3 / 1.5 = 2 < 2.5
  EXPECT_FLOAT_EQ(l[1], 2.0f);
  // Negative logits are multiplied.
  s.accept(3);
  l = {0.0f, 3.0f, 2.5f, -1.0f};
  (void)s.sample(l.data());
  EXPECT_FLOAT_EQ(l[3], -1.5f);
}

TEST(Sampler, FrequencyAndPresencePenalties) {
  SamplerConfig c = plain(0.0f);
  c.frequency_penalty = 0.5f;
  c.presence_penalty = 0.25f;
  c.repeat_last_n = 3;
  Sampler s(c, 3);
  s.accept(0);
  s.accept(0);
  s.accept(1);
  std::vector<float> l = {1.0f, 1.0f, 1.0f};
  (void)s.sample(l.data());
  EXPECT_FLOAT_EQ(l[0], 1.0f - 2 * 0.5f - 0.25f);
  EXPECT_FLOAT_EQ(l[1], 1.0f - 0.5f - 0.25f);
  EXPECT_FLOAT_EQ(l[2], 1.0f);
  // The window slides: only the last 3 accepted tokens count.
  s.accept(2);
  s.accept(2);
  s.accept(2);
  l = {1.0f, 1.0f, 1.0f};
  EXPECT_EQ(s.sample(l.data()), 0);
  EXPECT_FLOAT_EQ(l[2], 1.0f - 3 * 0.5f - 0.25f);
}

TEST(Sampler, EmpiricalDistributionMatchesSoftmax) {
  const std::vector<float> logits = {1.0f, 0.0f, 2.0f, -1.0f, 0.5f, 1.5f};
  const int n = static_cast<int>(logits.size());
  std::vector<double> p(n);
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += (p[i] = std::exp(logits[i]));
  for (double& x : p) x /= sum;

  Sampler s(plain(1.0f), n);
  const int draws = 20000;
  std::vector<int> counts(n, 0);
  for (int i = 0; i < draws; ++i) {
    std::vector<float> l = logits;
    ++counts[s.sample(l.data())];
  }
  for (int i = 0; i < n; ++i) {
    const double freq = static_cast<double>(counts[i]) / draws;
    // ~4 standard deviations of a binomial proportion at this sample size.
    const double tol = 4.0 * std::sqrt(p[i] * (1 - p[i]) / draws) + 1e-3;
    EXPECT_NEAR(freq, p[i], tol) << "token " << i;
  }
}

TEST(Sampler, TemperatureSharpensTheDistribution) {
  const std::vector<float> logits = {1.0f, 0.0f};
  SamplerConfig c = plain(0.25f);
  Sampler s(c, 2);
  int zeros = 0;
  for (int i = 0; i < 4000; ++i) {
    std::vector<float> l = logits;
    zeros += s.sample(l.data()) == 0;
  }
  // p(0) = 1 / (1 + e^-4) ~ 0.982
  EXPECT_NEAR(zeros / 4000.0, 1.0 / (1.0 + std::exp(-4.0)), 0.01);
}

}  // namespace
}  // namespace cohort::text
