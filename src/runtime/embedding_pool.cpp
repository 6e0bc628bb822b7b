#include "runtime/embedding_pool.h"

#include <cmath>

#include "core/check.h"

namespace cohort::runtime {

EmbeddingPooler::EmbeddingPooler(model::Pooling pooling, int64_t dim)
    : pooling_(pooling), dim_(dim), acc_(static_cast<size_t>(dim), 0.0) {
  COHORT_CHECK(dim > 0);
}

void EmbeddingPooler::add(const float* rows, int64_t n_rows) {
  if (n_rows <= 0) return;
  const auto keep = [&](const float* row) {
    for (int64_t i = 0; i < dim_; ++i) acc_[static_cast<size_t>(i)] = row[i];
  };
  switch (pooling_) {
    case model::Pooling::kMean:
      // Summed in double: a long prompt's thousands of rows lose no precision.
      for (int64_t t = 0; t < n_rows; ++t) {
        for (int64_t i = 0; i < dim_; ++i) acc_[static_cast<size_t>(i)] += rows[t * dim_ + i];
      }
      break;
    case model::Pooling::kFirst:
      if (n_tokens_ == 0) keep(rows);
      break;
    case model::Pooling::kLast:
      keep(rows + (n_rows - 1) * dim_);
      break;
  }
  n_tokens_ += n_rows;
}

std::vector<float> EmbeddingPooler::finish() const {
  std::vector<float> out(static_cast<size_t>(dim_), 0.0f);
  if (n_tokens_ == 0) return out;
  const double scale =
      pooling_ == model::Pooling::kMean ? 1.0 / static_cast<double>(n_tokens_) : 1.0;
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(acc_[i] * scale);
  l2_normalize(out);
  return out;
}

void l2_normalize(std::span<float> v) {
  double sum = 0;
  for (float x : v) sum += static_cast<double>(x) * x;
  if (sum <= 0) return;
  const double inv = 1.0 / std::sqrt(sum);
  for (float& x : v) x = static_cast<float>(x * inv);
}

void shorten_embedding(std::vector<float>& v, int64_t n_dims) {
  COHORT_CHECK(n_dims >= 1 && n_dims <= static_cast<int64_t>(v.size()));
  v.resize(static_cast<size_t>(n_dims));
  l2_normalize(v);
}

}  // namespace cohort::runtime
