// Transformer::forward_batch: several sequences at different positions in one forward give
// each exactly the logits it gets alone through forward(), on the trained stories260K and on
// synthetic models of each quantized type (and with a Q8_0 cache), and it rejects malformed
// batches with a clear error.
#include <gtest/gtest.h>

#include <algorithm>

#include "comm/communicator.h"
#include "format/gguf.h"
#include "model/synth.h"
#include "model/transformer.h"
#include "support/shared_data.h"
#include "support/temp_dir.h"

namespace cohort {
namespace {

constexpr int64_t kCtx = 64;

struct Model {
  explicit Model(const std::string& path, DType cache_type = DType::kF16)
      : kv_type(cache_type), pool(2), comm(comm::make_local_communicator()) {
    auto f = format::GgufFile::open(path);
    EXPECT_TRUE(f.is_ok()) << f.status().message();
    file = std::make_unique<format::GgufFile>(std::move(f).value());
    auto hp = model::HParams::from_gguf(*file);
    model = std::move(model::Transformer::create(*file, model::ShardSpec::whole(*hp), *comm, pool,
                                                 kernels::best(), 32)
                          .value());
  }
  model::KvCache cache() { return std::move(model->new_cache(kCtx, kv_type).value()); }
  int64_t n_vocab() const { return model->hparams().n_vocab; }

  DType kv_type;
  ThreadPool pool;
  std::unique_ptr<comm::Communicator> comm;
  std::unique_ptr<format::GgufFile> file;
  std::unique_ptr<model::Transformer> model;
};

// A sequence's tokens: its history (already in the cache) and the tokens of the step.
struct Seq {
  std::vector<int32_t> history;
  std::vector<int32_t> step;
};

std::vector<int32_t> tokens(int64_t n, int32_t first, int64_t n_vocab) {
  std::vector<int32_t> t;
  for (int64_t i = 0; i < n; ++i) t.push_back(static_cast<int32_t>((first + 7 * i) % n_vocab));
  return t;
}

// Runs each sequence's history alone into its cache, then its step: alone (reference) or
// all steps in one forward_batch. Returns the step logits, per sequence in order, every
// row when all_logits.
std::vector<float> run(Model& m, const std::vector<Seq>& seqs, bool batched, bool all_logits) {
  std::vector<model::KvCache> caches;
  for (size_t i = 0; i < seqs.size(); ++i) caches.push_back(m.cache());
  std::vector<float> scratch(static_cast<size_t>(kCtx * m.n_vocab()));
  for (size_t i = 0; i < seqs.size(); ++i) {
    if (seqs[i].history.empty()) continue;
    model::ForwardIo io;
    io.tokens = seqs[i].history.data();
    io.logits = scratch.data();
    EXPECT_TRUE(
        m.model->forward(static_cast<int64_t>(seqs[i].history.size()), 0, caches[i], io).is_ok());
  }
  std::vector<float> out;
  if (!batched) {
    for (size_t i = 0; i < seqs.size(); ++i) {
      const int64_t n = static_cast<int64_t>(seqs[i].step.size());
      model::ForwardIo io;
      io.tokens = seqs[i].step.data();
      io.logits = scratch.data();
      io.all_logits = all_logits;
      Status s = m.model->forward(n, static_cast<int64_t>(seqs[i].history.size()), caches[i], io);
      EXPECT_TRUE(s.is_ok()) << s.message();
      out.insert(out.end(), scratch.begin(), scratch.begin() + (all_logits ? n : 1) * m.n_vocab());
    }
    return out;
  }
  std::vector<model::BatchSeq> batch;
  std::vector<int32_t> rows;
  int64_t n_out = 0;
  for (size_t i = 0; i < seqs.size(); ++i) {
    const int64_t n = static_cast<int64_t>(seqs[i].step.size());
    batch.push_back({&caches[i], static_cast<int64_t>(seqs[i].history.size()), n});
    rows.insert(rows.end(), seqs[i].step.begin(), seqs[i].step.end());
    n_out += all_logits ? n : 1;
  }
  out.assign(static_cast<size_t>(n_out * m.n_vocab()), 0.f);
  model::ForwardIo io;
  io.tokens = rows.data();
  io.logits = out.data();
  io.all_logits = all_logits;
  Status s = m.model->forward_batch(batch, io);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return out;
}

// Decode steps at different positions, a prefill chunk from position 0 riding along, and a
// multi-token step in the middle of a sequence.
std::vector<Seq> mixed(int64_t n_vocab) {
  return {
      {tokens(5, 1, n_vocab), tokens(1, 3, n_vocab)},
      {{}, tokens(9, 11, n_vocab)},
      {tokens(17, 2, n_vocab), tokens(1, 5, n_vocab)},
      {tokens(3, 9, n_vocab), tokens(4, 13, n_vocab)},
  };
}

void expect_batched_matches_alone(Model& m) {
  for (bool all_logits : {false, true}) {
    SCOPED_TRACE(all_logits ? "every row's logits" : "last rows' logits");
    const std::vector<Seq> seqs = mixed(m.n_vocab());
    const std::vector<float> alone = run(m, seqs, false, all_logits);
    const std::vector<float> together = run(m, seqs, true, all_logits);
    ASSERT_EQ(together.size(), alone.size());
    EXPECT_TRUE(together == alone);  // the same bits (a mismatch would print 100k floats)
  }
}

TEST(BatchedForwardTest, Stories260KSequencesMatchEachAlone) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  Model m(testing::kSharedData + "/models/stories260K.gguf");
  expect_batched_matches_alone(m);
}

// A small synthetic llama (heads of 32 dims) with weights of type, written into dir.
std::string small_model(const testing::TempDir& dir, DType type) {
  model::SynthConfig c;
  c.dim = 128;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.ffn_dim = 256;
  c.n_vocab = 512;
  c.type = type;
  const std::string path = dir.file("m.gguf");
  Status w = model::write_synthetic_model(c, path);
  EXPECT_TRUE(w.is_ok()) << w.message();
  return path;
}

TEST(BatchedForwardTest, QuantizedSequencesMatchEachAlone) {
  testing::TempDir dir;
  for (DType type : {DType::kF16, DType::kQ8_0, DType::kQ4_0}) {
    SCOPED_TRACE(std::string(dtype_name(type)));
    Model m(small_model(dir, type));
    expect_batched_matches_alone(m);
  }
}

// With a Q8_0 cache (head_dim 32 here) too: a prompt chunk's rows share one pass over the
// quantized cache with their own causal limits and still get the bits of single calls.
TEST(BatchedForwardTest, Q8CacheSequencesMatchEachAlone) {
  testing::TempDir dir;
  Model m(small_model(dir, DType::kQ8_0), DType::kQ8_0);
  ASSERT_EQ(m.cache().type(), DType::kQ8_0);
  expect_batched_matches_alone(m);
}

TEST(BatchedForwardTest, RejectsMalformedBatches) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  Model m(testing::kSharedData + "/models/stories260K.gguf");
  model::KvCache a = m.cache(), b = m.cache();
  std::vector<int32_t> rows(40, 1);
  std::vector<float> logits(static_cast<size_t>(40 * m.n_vocab()));
  model::ForwardIo io;
  io.tokens = rows.data();
  io.logits = logits.data();
  auto code = [&](std::vector<model::BatchSeq> batch) {
    return m.model->forward_batch(batch, io).code();
  };
  EXPECT_EQ(code({}), StatusCode::kInvalidArgument);                             // no rows
  EXPECT_EQ(code({{&a, 0, 20}, {&b, 0, 20}}), StatusCode::kInvalidArgument);     // > max_batch
  EXPECT_EQ(code({{&a, 0, 1}, {&a, 1, 1}}), StatusCode::kInvalidArgument);       // one cache twice
  EXPECT_EQ(code({{&a, 0, 1}, {nullptr, 0, 1}}), StatusCode::kInvalidArgument);  // no cache
  EXPECT_EQ(code({{&a, 0, 0}}), StatusCode::kInvalidArgument);                   // no tokens
  EXPECT_EQ(code({{&a, 0, 1}, {&b, kCtx, 1}}), StatusCode::kOutOfRange);         // past n_ctx
  EXPECT_EQ(code({{&a, 0, 1}, {&b, 0, 1}}), StatusCode::kOk);
}

}  // namespace
}  // namespace cohort
