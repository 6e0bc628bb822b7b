#include "text/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.h"

namespace cohort::text {
namespace {

using Candidate = std::pair<float, int32_t>;

// Descending logit; equal logits by ascending id, so every order is reproducible.
bool by_logit_desc(const Candidate& a, const Candidate& b) {
  return a.first > b.first || (a.first == b.first && a.second < b.second);
}

}  // namespace

Sampler::Sampler(SamplerConfig config, int32_t n_vocab)
    : config_(config),
      n_vocab_(std::max(n_vocab, 0)),
      rng_(config.seed),
      counts_(static_cast<size_t>(n_vocab_), 0) {}

int32_t Sampler::sample(float* logits) {
  COHORT_CHECK(n_vocab_ > 0);

  // Penalties, as llama.cpp's penalties sampler: once per distinct recent token.
  const float rp = config_.repeat_penalty;
  const float fp = config_.frequency_penalty;
  const float pp = config_.presence_penalty;
  const bool use_rp = rp > 0.0f && rp != 1.0f;
  if (!recent_.empty() && (use_rp || fp != 0.0f || pp != 0.0f)) {
    for (const int32_t t : recent_) {
      const int32_t count = counts_[t];
      if (count <= 0) continue;  // already penalised (marked by negation below)
      float& l = logits[t];
      if (use_rp) l = l > 0.0f ? l / rp : l * rp;
      l -= static_cast<float>(count) * fp + pp;
      counts_[t] = -count;
    }
    for (const int32_t t : recent_) counts_[t] = std::abs(counts_[t]);
  }

  if (config_.allow) {
    bool any = false;
    for (int32_t i = 0; i < n_vocab_; ++i) {
      if (config_.allow(i)) {
        any = true;
      } else {
        logits[i] = -std::numeric_limits<float>::infinity();
      }
    }
    if (!any) return kNoToken;
  }

  if (config_.temperature <= 0.0f) {
    int32_t best = 0;
    for (int32_t i = 1; i < n_vocab_; ++i) {
      if (logits[i] > logits[best]) best = i;  // strict: ties keep the lowest id
    }
    return best;
  }

  candidates_.resize(static_cast<size_t>(n_vocab_));  // allocates on the first call only
  for (int32_t i = 0; i < n_vocab_; ++i) {
    const float l = logits[i];
    candidates_[i] = {std::isnan(l) ? -std::numeric_limits<float>::infinity() : l, i};
  }
  auto first = candidates_.begin();
  size_t size = candidates_.size();
  bool sorted = false;

  // top-k
  if (config_.top_k > 0 && static_cast<size_t>(config_.top_k) < size) {
    size = static_cast<size_t>(config_.top_k);
    std::partial_sort(first, first + static_cast<std::ptrdiff_t>(size), candidates_.end(),
                      by_logit_desc);
    sorted = true;
  }

  // top-p: the smallest prefix (by probability) whose mass reaches top_p, at least one token.
  if (config_.top_p < 1.0f) {
    if (!sorted) {
      std::sort(first, first + static_cast<std::ptrdiff_t>(size), by_logit_desc);
      sorted = true;
    }
    const float max_logit = candidates_[0].first;
    double sum = 0.0;
    for (size_t i = 0; i < size; ++i) sum += std::exp(candidates_[i].first - max_logit);
    double cum = 0.0;
    for (size_t i = 0; i < size; ++i) {
      cum += std::exp(candidates_[i].first - max_logit) / sum;
      if (cum >= config_.top_p) {
        size = i + 1;
        break;
      }
    }
  }

  // min-p: drop tokens whose probability is below min_p times the largest one, i.e. whose
  // logit is below max + log(min_p). Keeps the current order; skipped if it would keep none.
  if (config_.min_p > 0.0f) {
    float max_logit = candidates_[0].first;
    for (size_t i = 1; i < size; ++i) max_logit = std::max(max_logit, candidates_[i].first);
    const float min_logit = max_logit + std::log(config_.min_p);
    size_t kept = 0;
    for (size_t i = 0; i < size; ++i) kept += candidates_[i].first >= min_logit;
    if (kept > 0) {
      size_t w = 0;
      for (size_t i = 0; i < size; ++i) {
        if (candidates_[i].first >= min_logit) candidates_[w++] = candidates_[i];
      }
      size = w;
    }
  }

  // temperature, then a draw from softmax(logits / T).
  const float inv_t = 1.0f / config_.temperature;
  float max_logit = candidates_[0].first;
  for (size_t i = 1; i < size; ++i) max_logit = std::max(max_logit, candidates_[i].first);
  double sum = 0.0;
  for (size_t i = 0; i < size; ++i) {
    const float w = std::exp((candidates_[i].first - max_logit) * inv_t);
    candidates_[i].first = w;
    sum += w;
  }
  const double target = rng_.uniform() * sum;
  double cum = 0.0;
  for (size_t i = 0; i < size; ++i) {
    cum += candidates_[i].first;
    if (target < cum) return candidates_[i].second;
  }
  // Rounding left target at the very top: the last token with any weight.
  for (size_t i = size; i-- > 0;) {
    if (candidates_[i].first > 0.0f) return candidates_[i].second;
  }
  return candidates_[0].second;
}

void Sampler::accept(int32_t token) {
  if (token < 0 || token >= n_vocab_ || config_.repeat_last_n <= 0) return;
  recent_.push_back(token);
  ++counts_[token];
  while (recent_.size() > static_cast<size_t>(config_.repeat_last_n)) {
    --counts_[recent_.front()];
    recent_.pop_front();
  }
}

void Sampler::reset() {
  for (const int32_t t : recent_) counts_[t] = 0;
  recent_.clear();
  rng_ = Rng(config_.seed);
}

}  // namespace cohort::text
