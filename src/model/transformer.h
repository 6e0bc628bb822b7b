// The forward pass of a decoder-only transformer over one rank's shard: the layers
// [layer_begin, layer_end), the query heads and FFN columns of ShardSpec. After each
// row-parallel projection (attention output, FFN down) it sums partial results with the
// Communicator; with a size-1 communicator that is a no-op and this is the whole model.
// deepseek2's attention is model/mla_attention.h; its leading dense layers and shared
// experts run on the ranks ShardSpec::side_ffn_cols names.
// model/ never knows how many nodes there are.
//
// Ownership: the GgufFile, Communicator, ThreadPool and KernelTable passed to create() must
// outlive the Transformer (weights point into the file's mapping).
// Thread-safety: one thread calls forward() at a time; it uses every thread of the pool.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "comm/communicator.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "format/gguf.h"
#include "kernels/kernels.h"
#include "model/hparams.h"
#include "model/kv_cache.h"
#include "model/mla_attention.h"
#include "model/moe_ffn.h"
#include "model/packed_weights.h"
#include "model/shard_spec.h"
#include "model/weights.h"

namespace cohort::model {

struct ForwardIo {
  const int32_t* tokens = nullptr;   // shard.embeds: n_tokens token ids
  const float* hidden_in = nullptr;  // otherwise: [n_tokens][dim] from the previous stage
  float* hidden_out = nullptr;       // !shard.outputs: [n_tokens][dim] for the next stage
  float* logits = nullptr;           // shard.outputs: [all_logits ? n_tokens : 1][n_vocab]
  bool all_logits = false;           // logits of every token, or only of the last
  // shard.outputs, for embeddings: when set, every row's final hidden state after the output
  // norm, [n_tokens][dim], is written here instead of logits (the vocabulary projection, the
  // costliest matrix of a small model, is skipped).
  float* hidden_normed = nullptr;
};

// One sequence's share of a batched forward: n_tokens >= 1 tokens at positions
// pos0 .. pos0 + n_tokens - 1 of its own cache.
struct BatchSeq {
  KvCache* kv = nullptr;
  int64_t pos0 = 0;
  int64_t n_tokens = 1;
};

class Transformer {
 public:
  // max_batch: the most tokens one forward() call may carry (prefill chunk size).
  // The matrices are copied into kt's packed layouts where kt has them
  // (model/packed_weights.h); a table without them multiplies the file's layout in place.
  static Result<std::unique_ptr<Transformer>> create(const format::GgufFile& file,
                                                     const ShardSpec& shard,
                                                     comm::Communicator& comm, ThreadPool& pool,
                                                     const kernels::KernelTable& kt,
                                                     int64_t max_batch);

  const HParams& hparams() const { return hp_; }
  const ShardSpec& shard() const { return shard_; }
  int64_t max_batch() const { return max_batch_; }
  // Bytes of this shard's weights in packed layouts (0: all in the file's layout).
  size_t packed_weight_bytes() const { return packed_.bytes(); }

  // Tokens routed to each expert of this shard's layers so far; nullptr for dense models.
  const ExpertUsage* expert_usage() const { return moe_ ? &moe_->usage() : nullptr; }

  // A cache for one sequence of up to n_ctx positions, shaped for this shard.
  Result<KvCache> new_cache(int64_t n_ctx, DType type) const;

  // Runs tokens at positions pos0 .. pos0 + n_tokens - 1 (earlier positions must already be
  // in kv). Token ids and positions are checked; errors from the communicator pass through.
  Status forward(int64_t n_tokens, int64_t pos0, KvCache& kv, const ForwardIo& io);

  // Runs several sequences (each on its own cache; no cache twice) as one forward: every
  // linear layer multiplies all their rows at once, attention reads each row's own cache.
  // io's rows are the sequences' tokens concatenated in order (at most max_batch() in all);
  // the logits are, per sequence in order, its last row's (every row's when all_logits).
  // Each sequence gets the bits forward() would give it alone (kernels::matmul's result for
  // a row does not depend on the other rows).
  Status forward_batch(std::span<const BatchSeq> seqs, const ForwardIo& io);

 private:
  Transformer(HParams hp, ShardSpec shard, Weights w, comm::Communicator& comm, ThreadPool& pool,
              const kernels::KernelTable& kt, int64_t max_batch);
  void allocate_scratch();
  Status check_batch(std::span<const BatchSeq> seqs) const;
  // Fills row_kv_ / row_pos_ and the rotary tables for the rows of seqs; returns the rows.
  int64_t layout_rows(std::span<const BatchSeq> seqs);
  Status attention_block(const LayerWeights& L, int64_t layer, int64_t n_tokens);
  // attn_output of att_, summed over ranks, added to the residual.
  Status finish_attention(const LayerWeights& L, int64_t n_tokens);
  Status ffn_block(const LayerWeights& L, int64_t layer, int64_t n_tokens);
  // x_ += o_ over the first n_tokens rows.
  void add_residual(int64_t n_tokens);
  void linear(const kernels::WeightMatrix& w, const float* x, int64_t n_tokens, float* y);
  // fn(t0, t1) over rows [0, n_tokens) split among the pool's threads (each row's work,
  // ~units_per_row multiply-adds, on one thread, so its bits do not depend on the split), or
  // on the calling thread alone when there is too little work to share (a decode step).
  template <typename Fn>
  void for_rows(int64_t n_tokens, int64_t units_per_row, Fn&& fn);

  HParams hp_;
  ShardSpec shard_;
  Weights w_;
  PackedWeights packed_;  // w_'s packed forms point here
  comm::Communicator& comm_;
  ThreadPool& pool_;
  const kernels::KernelTable& kt_;
  int64_t max_batch_;
  std::unique_ptr<MoeFfn> moe_;        // mixture-of-experts models only
  std::unique_ptr<MlaAttention> mla_;  // multi-head latent attention (deepseek2) only
  int64_t n_q_, n_kv_, n_ffn_;         // local widths: q_dim, kv_dim and FFN columns of this shard
  int64_t n_att_;                      // local width of the attention output (heads x values)
  int64_t timeout_ms_ = comm::kDefaultTimeoutMs;

  // Scratch, sized once for max_batch tokens: no allocation in the token loop.
  std::vector<float> x_, xn_, q_, k_, v_, att_, o_, gate_, up_;
  std::vector<float> cos_, sin_, inv_freq_, attn_scratch_;
  float rope_magnitude_ = 1.0f;  // of every cos and sin (model/rope.h)
  std::vector<uint8_t> workspace_;
  // Per row of the current forward: its sequence's cache and its position.
  std::vector<KvCache*> row_kv_;
  std::vector<int64_t> row_pos_;
  // Attention: the first row of each run of rows of one sequence (plus the end), and per
  // thread the gathered query/output rows and causal limits of one run.
  std::vector<int64_t> run_begin_;
  std::vector<float> attn_rows_;
  std::vector<int64_t> attn_limits_;
};

}  // namespace cohort::model
