// Turns a prompt's per-token hidden states (Stepper::step_hidden, after the output norm) into
// one embedding: pooled over the tokens as the model asks (model::Pooling: the mean by
// default, the first or the last token), then scaled to unit L2 length as Ollama does, so a
// dot product of two embeddings is their cosine similarity.
//
// States arrive chunk by chunk in token order (a prompt longer than max_batch runs as several
// steps); only a running sum, or one row, is kept. Not thread-safe; one per prompt.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/hparams.h"

namespace cohort::runtime {

class EmbeddingPooler {
 public:
  EmbeddingPooler(model::Pooling pooling, int64_t dim);
  // rows: [n_rows][dim], the next tokens' states.
  void add(const float* rows, int64_t n_rows);
  int64_t n_tokens() const { return n_tokens_; }
  // The pooled, L2-normalised embedding (all zeros when no token was added).
  std::vector<float> finish() const;

 private:
  model::Pooling pooling_;
  int64_t dim_;
  int64_t n_tokens_ = 0;
  std::vector<double> acc_;  // mean: the sum so far; first/last: the row kept
};

// Scales v to unit L2 length; a zero vector stays zero (Ollama's rule).
void l2_normalize(std::span<float> v);

// Keeps the first n_dims values of a unit embedding and normalises them again: the
// Matryoshka shortening that OpenAI's and Ollama's `dimensions` perform. 1 <= n_dims <= size.
void shorten_embedding(std::vector<float>& v, int64_t n_dims);

}  // namespace cohort::runtime
