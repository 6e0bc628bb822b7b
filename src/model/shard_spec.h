// Which part of the model one rank computes. model/ sees only this and a Communicator:
// it never knows how many nodes there are. Heads and FFN columns are ranges of the whole
// model's; KV heads are those the rank's query heads read (replicated when ranks outnumber
// KV heads). In a mixture-of-experts model, FFN columns are those of every expert the rank
// holds, and experts are a range of the model's too: expert parallelism gives ranks
// disjoint expert ranges of whole experts, tensor slicing gives every rank all experts and a
// column range of each (both may combine). The whole model on one node is ShardSpec::whole().
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "model/hparams.h"

namespace cohort::model {

struct ShardSpec {
  int64_t layer_begin = 0, layer_end = 0;    // layers [begin, end) run here (pipeline stage)
  int64_t head_begin = 0, head_end = 0;      // query heads (tensor parallel)
  int64_t ffn_begin = 0, ffn_end = 0;        // FFN intermediate columns (tensor parallel)
  int64_t expert_begin = 0, expert_end = 0;  // experts held (MoE; [0, 0) for dense models)
  bool embeds = true;   // this stage turns token ids into the first hidden state
  bool outputs = true;  // this stage turns the last hidden state into logits

  static ShardSpec whole(const HParams& hp);

  int64_t n_layers() const { return layer_end - layer_begin; }
  int64_t n_heads() const { return head_end - head_begin; }
  int64_t n_ffn() const { return ffn_end - ffn_begin; }
  int64_t n_experts() const { return expert_end - expert_begin; }
  // KV heads [kv_begin, kv_end) the query heads [head_begin, head_end) read.
  int64_t kv_head_begin(const HParams& hp) const;
  int64_t kv_head_end(const HParams& hp) const;

  // deepseek2's FFNs outside the routed experts (dense leading layers, shared experts) are
  // run by the ranks holding expert 0 only, so expert-parallel ranks do not add them twice;
  // those ranks take the columns [*b, *e) of such an FFN `width` wide that go with their
  // FFN range: proportional to [ffn_begin, ffn_end) of hp.ffn_dim, bounds rounded down to
  // multiples of align but for the last (width). Ranks whose FFN ranges partition the
  // experts' columns thus partition these. Empty ([0, 0)) on the other ranks, or when the
  // rounding leaves this rank nothing.
  void side_ffn_cols(const HParams& hp, int64_t width, int64_t align, int64_t* b, int64_t* e) const;

  // Checks ranges against hp (and GQA grouping); a clear Status otherwise.
  Status validate(const HParams& hp) const;
  std::string to_string() const;
  bool operator==(const ShardSpec&) const = default;
};

}  // namespace cohort::model
