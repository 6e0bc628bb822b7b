#include "model/shard_spec.h"

namespace cohort::model {

ShardSpec ShardSpec::whole(const HParams& hp) {
  ShardSpec s;
  s.layer_end = hp.n_layers;
  s.head_end = hp.n_heads;
  s.ffn_end = hp.ffn_dim;
  s.expert_end = hp.n_expert;
  return s;
}

int64_t ShardSpec::kv_head_begin(const HParams& hp) const {
  const int64_t group = hp.n_heads / hp.n_kv_heads;
  return head_begin / group;
}

int64_t ShardSpec::kv_head_end(const HParams& hp) const {
  const int64_t group = hp.n_heads / hp.n_kv_heads;
  return (head_end + group - 1) / group;
}

void ShardSpec::side_ffn_cols(const HParams& hp, int64_t width, int64_t align, int64_t* b,
                              int64_t* e) const {
  *b = *e = 0;
  if (expert_begin != 0) return;
  auto map = [&](int64_t f) {
    if (f >= hp.ffn_dim) return width;
    return f * width / hp.ffn_dim / align * align;
  };
  *b = map(ffn_begin);
  *e = map(ffn_end);
}

Status ShardSpec::validate(const HParams& hp) const {
  auto range_ok = [](int64_t b, int64_t e, int64_t n) { return 0 <= b && b < e && e <= n; };
  if (!range_ok(layer_begin, layer_end, hp.n_layers))
    return Status::invalid_argument("shard: bad layer range " + to_string());
  if (!range_ok(head_begin, head_end, hp.n_heads))
    return Status::invalid_argument("shard: bad head range " + to_string());
  if (!range_ok(ffn_begin, ffn_end, hp.ffn_dim))
    return Status::invalid_argument("shard: bad ffn range " + to_string());
  const bool experts_ok = hp.is_moe() ? range_ok(expert_begin, expert_end, hp.n_expert)
                                      : expert_begin == 0 && expert_end == 0;
  if (!experts_ok) return Status::invalid_argument("shard: bad expert range " + to_string());
  return Status::ok();
}

std::string ShardSpec::to_string() const {
  return "layers [" + std::to_string(layer_begin) + "," + std::to_string(layer_end) + ") heads [" +
         std::to_string(head_begin) + "," + std::to_string(head_end) + ") ffn [" +
         std::to_string(ffn_begin) + "," + std::to_string(ffn_end) + ")" +
         (expert_end > 0
              ? " experts [" + std::to_string(expert_begin) + "," + std::to_string(expert_end) + ")"
              : "") +
         (embeds ? " embeds" : "") + (outputs ? " outputs" : "");
}

}  // namespace cohort::model
