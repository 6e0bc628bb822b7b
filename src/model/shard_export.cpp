#include "model/shard_export.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "model/hparams.h"
#include "model/weights.h"

namespace cohort::model {
namespace {

// Where a cut's dense bytes come from in the whole tensor: the cut is laid out as
// cut_mats() x cut_rows() rows of dst_row bytes; its row i is at src + src_offset(i).
struct CutLayout {
  const uint8_t* src = nullptr;
  size_t src_row = 0;  // bytes of a whole row
  size_t dst_row = 0;  // bytes of a cut row
  size_t col_off = 0;  // bytes from a whole row's start to the cut's first column
  int64_t rows = 0, r0 = 0, cut_rows = 0, m0 = 0;

  const uint8_t* row(uint64_t i) const {
    const uint64_t m = i / cut_rows, r = i % cut_rows;
    return src + ((m0 + m) * rows + r0 + r) * src_row + col_off;
  }
};

// Copies bytes [offset, offset + n) of the cut (its dense layout) to dst.
void copy_cut(const CutLayout& c, uint64_t offset, uint64_t n, uint8_t* dst) {
  while (n > 0) {
    const uint64_t r = offset / c.dst_row, in_row = offset % c.dst_row;
    const uint64_t take = std::min<uint64_t>(n, c.dst_row - in_row);
    std::memcpy(dst, c.row(r) + in_row, take);
    dst += take;
    offset += take;
    n -= take;
  }
}

void set_range(format::GgufWriter& w, const char* key, int64_t b, int64_t e) {
  w.set_i32s(key, {static_cast<int32_t>(b), static_cast<int32_t>(e)});
}

}  // namespace

Result<format::GgufWriter> shard_writer(const format::GgufFile& file, const ShardSpec& shard) {
  if (shard_file_spec(file)) {
    return Status::invalid_argument("model: " + file.name() +
                                    " is already a shard file; cut shards from the whole model");
  }
  COHORT_ASSIGN_OR_RETURN(HParams hp, HParams::from_gguf(file));
  std::vector<TensorCut> cuts;
  // Binding with the reference table accepts every type any node can run; it also checks
  // that the shard fits the model (ranges, block alignment) before anything is written.
  COHORT_RETURN_IF_ERROR(Weights::bind(file, hp, shard, kernels::reference(), &cuts).status());

  format::GgufWriter w;
  for (const format::GgufKeyValue& kv : file.metadata()) {
    if (kv.key == "general.alignment" || kv.key.starts_with("cohort.shard.")) continue;
    w.set_value(std::string(kv.key), kv.value);
  }
  w.set_alignment(static_cast<uint32_t>(file.alignment()));
  set_range(w, "cohort.shard.layers", shard.layer_begin, shard.layer_end);
  set_range(w, "cohort.shard.heads", shard.head_begin, shard.head_end);
  set_range(w, "cohort.shard.ffn", shard.ffn_begin, shard.ffn_end);
  if (hp.is_moe()) set_range(w, "cohort.shard.experts", shard.expert_begin, shard.expert_end);
  w.set_bool("cohort.shard.embeds", shard.embeds);
  w.set_bool("cohort.shard.outputs", shard.outputs);
  w.set_u32("cohort.shard.format", kShardFormatVersion);
  // What HParams otherwise reads off token_embd/output, which this shard may not hold.
  w.set_i64("cohort.shard.n_vocab", hp.n_vocab);
  w.set_bool("cohort.shard.tied_embeddings", hp.tied_embeddings);

  for (const TensorCut& c : cuts) {
    const format::GgufTensorInfo* t = file.find_tensor(c.name);
    CutLayout layout;
    layout.src = file.tensor_data(*t);
    layout.src_row = row_bytes(t->type, c.cols);
    layout.dst_row = row_bytes(t->type, c.cut_cols());
    layout.col_off = row_bytes(t->type, c.c0);
    layout.rows = c.rows;
    layout.r0 = c.r0;
    layout.cut_rows = c.cut_rows();
    layout.m0 = c.m0;
    std::vector<int64_t> shape = c.is_vector ? std::vector<int64_t>{c.cut_cols()}
                                             : std::vector<int64_t>{c.cut_cols(), c.cut_rows()};
    if (c.n_mats) shape.push_back(c.cut_mats());
    w.add_tensor_chunked(
        std::string(c.name), t->type, std::move(shape),
        [=](uint8_t* dst, uint64_t offset, uint64_t n) { copy_cut(layout, offset, n, dst); });
  }
  return w;
}

std::string shard_key(uint64_t model_fingerprint, uint64_t model_bytes, const ShardSpec& shard) {
  const int64_t fields[] = {static_cast<int64_t>(model_fingerprint),
                            static_cast<int64_t>(model_bytes),
                            kShardFormatVersion,
                            shard.layer_begin,
                            shard.layer_end,
                            shard.head_begin,
                            shard.head_end,
                            shard.ffn_begin,
                            shard.ffn_end,
                            shard.expert_begin,
                            shard.expert_end,
                            shard.embeds ? 1 : 0,
                            shard.outputs ? 1 : 0};
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(fields, sizeof(fields))));
  return buf;
}

}  // namespace cohort::model
