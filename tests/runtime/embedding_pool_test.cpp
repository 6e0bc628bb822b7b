// Pooling per-token hidden states into one embedding: the mean, first or last row, the same
// whether rows come in one chunk or several, scaled to unit length (zero stays zero), and
// shortened to fewer dimensions with a second normalisation.
#include "runtime/embedding_pool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace cohort::runtime {
namespace {

// Three tokens of dim 2.
const std::vector<float> kRows = {1, 0, 3, 4, 2, 2};

double norm(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += static_cast<double>(x) * x;
  return std::sqrt(s);
}

TEST(EmbeddingPooler, MeanFirstAndLast) {
  EmbeddingPooler mean(model::Pooling::kMean, 2);
  mean.add(kRows.data(), 3);
  EXPECT_EQ(mean.n_tokens(), 3);
  // Mean (2, 2) -> (1, 1) / sqrt(2).
  const std::vector<float> m = mean.finish();
  EXPECT_FLOAT_EQ(m[0], static_cast<float>(1 / std::sqrt(2.0)));
  EXPECT_FLOAT_EQ(m[1], static_cast<float>(1 / std::sqrt(2.0)));

  EmbeddingPooler first(model::Pooling::kFirst, 2);
  first.add(kRows.data(), 3);
  EXPECT_EQ(first.finish(), (std::vector<float>{1, 0}));

  EmbeddingPooler last(model::Pooling::kLast, 2);
  last.add(kRows.data(), 3);
  const std::vector<float> l = last.finish();
  EXPECT_FLOAT_EQ(l[0], static_cast<float>(1 / std::sqrt(2.0)));
  EXPECT_FLOAT_EQ(l[1], static_cast<float>(1 / std::sqrt(2.0)));
}

TEST(EmbeddingPooler, ChunksPoolAsOneCall) {
  for (model::Pooling p : {model::Pooling::kMean, model::Pooling::kFirst, model::Pooling::kLast}) {
    EmbeddingPooler whole(p, 2), chunked(p, 2);
    whole.add(kRows.data(), 3);
    chunked.add(kRows.data(), 1);
    chunked.add(kRows.data() + 2, 2);
    EXPECT_EQ(whole.finish(), chunked.finish()) << static_cast<int>(p);
  }
  // Last: the last row of the last chunk, not of the first.
  EmbeddingPooler last(model::Pooling::kLast, 2);
  last.add(kRows.data(), 2);
  last.add(kRows.data() + 4, 1);
  const std::vector<float> l = last.finish();
  EXPECT_FLOAT_EQ(l[0], l[1]);
}

TEST(EmbeddingPooler, UnitLengthAndZeroStaysZero) {
  EmbeddingPooler mean(model::Pooling::kMean, 2);
  const std::vector<float> big = {3e5f, -4e5f};
  mean.add(big.data(), 1);
  const std::vector<float> e = mean.finish();
  EXPECT_NEAR(norm(e), 1.0, 1e-6);
  EXPECT_FLOAT_EQ(e[0], 0.6f);
  EXPECT_FLOAT_EQ(e[1], -0.8f);

  EmbeddingPooler none(model::Pooling::kMean, 3);
  EXPECT_EQ(none.finish(), (std::vector<float>{0, 0, 0}));
  std::vector<float> zero = {0, 0};
  l2_normalize(zero);
  EXPECT_EQ(zero, (std::vector<float>{0, 0}));
}

TEST(ShortenEmbedding, KeepsTheFirstValuesAtUnitLength) {
  std::vector<float> v = {0.6f, 0.8f, 0.0f};
  l2_normalize(v);
  std::vector<float> w = {3, 4, 12};
  l2_normalize(w);
  shorten_embedding(w, 2);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_FLOAT_EQ(w[0], 0.6f);
  EXPECT_FLOAT_EQ(w[1], 0.8f);
  shorten_embedding(v, 3);
  EXPECT_NEAR(norm(v), 1.0, 1e-6);
}

}  // namespace
}  // namespace cohort::runtime
