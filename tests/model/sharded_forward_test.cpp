// The forward pass split across ranks of an in-process group (one thread per rank) gives
// the single-node result: tensor-parallel head/FFN splits (even, uneven, and not aligned to
// GQA groups, which replicates KV heads) and pipeline layer splits, of dense models and of
// mixture-of-experts models (qwen3moe, Mixtral-style llama, deepseek2 with its latent
// attention, shared experts and dense first layer), whose experts are also spread across
// ranks (expert parallel). This is the seam the cluster builds on: model/ only sees a
// ShardSpec and a Communicator.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <thread>

#include "comm/in_process_group.h"
#include "core/rng.h"
#include "format/gguf.h"
#include "model/shard_export.h"
#include "model/synth.h"
#include "model/transformer.h"
#include "support/rope_reference.h"
#include "support/temp_dir.h"

namespace cohort {
namespace {

struct Split {
  using Ranges = std::vector<std::pair<int64_t, int64_t>>;
  Split(Ranges h, Ranges f, Ranges l, Ranges e = {})
      : heads(std::move(h)), ffn(std::move(f)), layers(std::move(l)), experts(std::move(e)) {}
  Ranges heads, ffn, layers;  // per rank
  Ranges experts;             // per rank, or empty: all experts
};

// A model: dense, or with experts (each as wide as the dense FFN, so that the same FFN
// column splits apply to both).
struct ModelCase {
  DType type;
  const char* arch = "llama";
  int64_t n_expert = 0, n_expert_used = 0;
  // deepseek2: YaRN rope scaling and attn_kv_b split into per-head attn_k_b/attn_v_b.
  bool yarn_split = false;
};

std::string case_name(const ::testing::TestParamInfo<ModelCase>& p) {
  std::string name = std::string(p.param.arch) + "_" + std::string(dtype_name(p.param.type));
  if (p.param.n_expert)
    name += "_experts" + std::to_string(p.param.n_expert) + "_top" +
            std::to_string(p.param.n_expert_used);
  if (p.param.yarn_split) name += "_yarn_split_kv_b";
  return name;
}

class ShardedForward : public ::testing::TestWithParam<ModelCase> {
 protected:
  void SetUp() override {
    model::SynthConfig c;
    c.arch = GetParam().arch;
    c.dim = 128;
    c.n_layers = 3;
    c.n_heads = 8;
    c.n_kv_heads = 4;
    c.ffn_dim = 256;
    c.n_expert = GetParam().n_expert;
    c.n_expert_used = GetParam().n_expert_used;
    c.n_expert_groups = c.arch == "deepseek2" ? 4 : 1;  // 2 of 4 groups of 2 experts
    c.n_expert_groups_used = c.arch == "deepseek2" ? 2 : 1;
    c.n_vocab = 400;
    c.type = GetParam().type;
    c.seed = 5;
    if (GetParam().yarn_split) {
      c.split_kv_b = true;
      testing::use_test_yarn(c);
    }
    ASSERT_TRUE(model::write_synthetic_model(c, dir_.file("m.gguf")).is_ok());
    auto f = format::GgufFile::open(dir_.file("m.gguf"));
    ASSERT_TRUE(f.is_ok());
    file_ = std::make_unique<format::GgufFile>(std::move(f).value());
    auto hp = model::HParams::from_gguf(*file_);
    ASSERT_TRUE(hp.is_ok());
    hp_ = *hp;
    Rng rng(3);
    seq_.resize(20);
    for (auto& id : seq_) id = static_cast<int32_t>(rng.next_u64() % c.n_vocab);
    single_ = run({{{0, 8}}, {{0, 256}}, {{0, 3}}});
  }

  // Runs seq_ through the ranks of split (tensor-parallel when heads/ffn have several
  // entries, pipeline when layers do) in chunks of 6 tokens and returns the logits of every
  // position as the last rank sees them.
  std::vector<float> run(const Split& split) {
    const int n = static_cast<int>(std::max({split.heads.size(), split.layers.size()}));
    auto group = comm::make_in_process_group(n);
    std::vector<std::vector<float>> logits(n);
    std::vector<Status> status(n);
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
      threads.emplace_back([&, r] { status[r] = run_rank(split, r, n, *group[r], &logits[r]); });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < n; ++r)
      EXPECT_TRUE(status[r].is_ok()) << "rank " << r << ": " << status[r].message();
    return logits[n - 1];
  }

  Status run_rank(const Split& split, int r, int n, comm::Communicator& comm,
                  std::vector<float>* out) {
    const bool pipeline = split.layers.size() > 1;
    model::ShardSpec s = model::ShardSpec::whole(hp_);
    if (pipeline) {
      std::tie(s.layer_begin, s.layer_end) = split.layers[r];
      s.embeds = r == 0;
      s.outputs = r == n - 1;
    } else {
      std::tie(s.head_begin, s.head_end) = split.heads[r];
      if (!split.ffn.empty()) std::tie(s.ffn_begin, s.ffn_end) = split.ffn[r];
      if (!split.experts.empty()) std::tie(s.expert_begin, s.expert_end) = split.experts[r];
    }
    ThreadPool pool(1);
    // Pipeline stages pass activations with the group's send/recv; inside a stage there is
    // no tensor parallelism, so the model gets a group of one.
    auto local = comm::make_local_communicator();
    comm::Communicator& tp = pipeline ? *local : comm;
    // With shard files, the rank binds the file a head would ship it instead of the model.
    std::optional<format::GgufFile> shard_file;
    if (from_shard_files_) {
      COHORT_ASSIGN_OR_RETURN(format::GgufWriter w, model::shard_writer(*file_, s));
      auto bytes = std::make_shared<const std::vector<uint8_t>>(w.write_memory());
      if (bytes->size() != w.total_bytes()) return Status::internal("total_bytes() is wrong");
      COHORT_ASSIGN_OR_RETURN(auto f, format::GgufFile::from_bytes("shard", bytes));
      shard_file.emplace(std::move(f));
      uint64_t tensor_bytes = 0, expert_bytes = 0;
      for (const auto& t : shard_file->tensors()) {
        tensor_bytes += t.bytes;
        if (std::string(t.name).find("_exps.") != std::string::npos) expert_bytes += t.bytes;
      }
      shard_tensor_bytes_[r] = tensor_bytes;
      shard_expert_bytes_[r] = expert_bytes;
    }
    COHORT_ASSIGN_OR_RETURN(auto m, model::Transformer::create(shard_file ? *shard_file : *file_, s,
                                                               tp, pool, kernels::best(), 6));
    COHORT_ASSIGN_OR_RETURN(model::KvCache kv, m->new_cache(32, DType::kF32));
    const int64_t V = hp_.n_vocab, D = hp_.dim, T = static_cast<int64_t>(seq_.size());
    out->assign(T * V, 0.f);
    std::vector<float> hidden(6 * D);
    for (int64_t p = 0; p < T; p += 6) {
      const int64_t len = std::min<int64_t>(6, T - p);
      model::ForwardIo io;
      io.tokens = seq_.data() + p;
      io.all_logits = true;
      io.logits = out->data() + p * V;
      if (!s.embeds) {
        COHORT_RETURN_IF_ERROR(comm.recv(r - 1, hidden.data(), len * D * 4, 10000));
        io.hidden_in = hidden.data();
      }
      if (!s.outputs) io.hidden_out = hidden.data();
      COHORT_RETURN_IF_ERROR(m->forward(len, p, kv, io));
      if (!s.outputs) COHORT_RETURN_IF_ERROR(comm.send(r + 1, hidden.data(), len * D * 4, 10000));
    }
    return Status::ok();
  }

  void expect_close(const std::vector<float>& got) {
    ASSERT_EQ(got.size(), single_.size());
    double max_err = 0, max_mag = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      max_err = std::max(max_err, double(std::abs(got[i] - single_[i])));
      max_mag = std::max(max_mag, double(std::abs(single_[i])));
    }
    // f32: partial sums are added in another order, a few ulps. Quantized types: activations
    // are re-quantized to int8 after each layer, and a value that moves by an ulp across a
    // rounding boundary moves by a whole int8 step; measured up to 0.7% of the largest logit
    // (q8_0, 4 ranks), where the same split in f32 stays under 1e-6.
    const double tol = GetParam().type == DType::kF32 ? 1e-5 : 1e-2;
    EXPECT_LT(max_err, tol * max_mag) << "max |err| " << max_err << " of " << max_mag;
    // Greedy tokens agree except at near-ties: positions whose top-2 margin on one node is
    // within twice the largest deviation.
    const int64_t V = hp_.n_vocab;
    for (size_t t = 0; t < seq_.size(); ++t) {
      const auto a = std::max_element(got.begin() + t * V, got.begin() + (t + 1) * V);
      const auto b = std::max_element(single_.begin() + t * V, single_.begin() + (t + 1) * V);
      float second = -1e30f;
      for (auto it = single_.begin() + t * V; it != single_.begin() + (t + 1) * V; ++it)
        if (it != b) second = std::max(second, *it);
      if (*b - second > 2 * max_err) {
        EXPECT_EQ(a - got.begin(), b - single_.begin()) << "argmax differs at position " << t;
      }
    }
  }

  // Runs split from the model file and from shard files cut for each rank: the logits must
  // be bit-identical (the same bytes reach the same kernels).
  void expect_shard_files_identical(const Split& split) {
    from_shard_files_ = false;
    const std::vector<float> whole = run(split);
    from_shard_files_ = true;
    shard_tensor_bytes_.assign(8, 0);
    shard_expert_bytes_.assign(8, 0);
    const std::vector<float> shipped = run(split);
    from_shard_files_ = false;
    ASSERT_EQ(whole.size(), shipped.size());
    EXPECT_TRUE(whole == shipped) << "logits from shard files differ";
  }

  testing::TempDir dir_;
  bool from_shard_files_ = false;
  std::vector<uint64_t> shard_tensor_bytes_ = std::vector<uint64_t>(8, 0);
  std::vector<uint64_t> shard_expert_bytes_ = std::vector<uint64_t>(8, 0);
  std::unique_ptr<format::GgufFile> file_;
  model::HParams hp_;
  std::vector<int32_t> seq_;
  std::vector<float> single_;
};

TEST_P(ShardedForward, TensorParallelTwoRanksEven) {
  expect_close(run({{{0, 4}, {4, 8}}, {{0, 128}, {128, 256}}, {}}));
}

TEST_P(ShardedForward, TensorParallelThreeRanksUneven) {
  expect_close(run({{{0, 2}, {2, 4}, {4, 8}}, {{0, 96}, {96, 160}, {160, 256}}, {}}));
}

TEST_P(ShardedForward, TensorParallelSplitInsideGqaGroupReplicatesKvHeads) {
  // Heads 0..2 and 3..7: KV head 1 (read by heads 2 and 3) lives on both ranks.
  if (GetParam().type == DType::kF32) {
    expect_close(run({{{0, 3}, {3, 8}}, {{0, 100}, {100, 256}}, {}}));
    return;
  }
  // In q8_0 the head boundary (3 x 16 = 48 columns of attn_output) splits a block of 32, so
  // the split is refused with a clear error...
  auto group = comm::make_in_process_group(2);
  model::ShardSpec s = model::ShardSpec::whole(hp_);
  s.head_end = 3;
  ThreadPool pool(1);
  auto m = model::Transformer::create(*file_, s, *group[0], pool, kernels::best(), 6);
  ASSERT_FALSE(m.is_ok());
  EXPECT_NE(m.status().message().find("cannot slice columns"), std::string::npos)
      << m.status().message();
  // ...while block-aligned splits of 2 heads over 4 ranks work.
  expect_close(
      run({{{0, 2}, {2, 4}, {4, 6}, {6, 8}}, {{0, 64}, {64, 128}, {128, 192}, {192, 256}}, {}}));
}

TEST_P(ShardedForward, PipelineTwoAndThreeStages) {
  expect_close(run({{}, {}, {{0, 1}, {1, 3}}}));
  expect_close(run({{}, {}, {{0, 1}, {1, 2}, {2, 3}}}));
}

TEST_P(ShardedForward, ShardFilesGiveTheSameLogitsAsTheModelFile) {
  expect_shard_files_identical({{{0, 2}, {2, 4}, {4, 8}}, {{0, 96}, {96, 160}, {160, 256}}, {}});
  expect_shard_files_identical(
      {{{0, 2}, {2, 4}, {4, 6}, {6, 8}}, {{0, 64}, {64, 128}, {128, 192}, {192, 256}}, {}});
  expect_shard_files_identical({{}, {}, {{0, 1}, {1, 2}, {2, 3}}});
  // Pipeline stages partition the model: their shard files hold every tensor exactly once.
  uint64_t whole = 0, parts = 0;
  for (const auto& t : file_->tensors()) whole += t.bytes;
  for (uint64_t b : shard_tensor_bytes_) parts += b;
  EXPECT_EQ(parts, whole);
}

TEST_P(ShardedForward, ShardFileServesOnlyItsShard) {
  model::ShardSpec s = model::ShardSpec::whole(hp_);
  s.layer_end = 2;
  s.outputs = false;
  auto w = model::shard_writer(*file_, s);
  ASSERT_TRUE(w.is_ok()) << w.status().message();
  auto f = format::GgufFile::from_bytes(
      "shard.gguf", std::make_shared<const std::vector<uint8_t>>(w->write_memory()));
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  ASSERT_TRUE(model::shard_file_spec(*f).has_value());
  EXPECT_TRUE(*model::shard_file_spec(*f) == s);
  EXPECT_FALSE(model::shard_file_spec(*file_).has_value());

  auto local = comm::make_local_communicator();
  ThreadPool pool(1);
  model::ShardSpec other = s;
  other.layer_end = 3;
  auto m = model::Transformer::create(*f, other, *local, pool, kernels::best(), 6);
  ASSERT_FALSE(m.is_ok());
  EXPECT_NE(m.status().message().find("is a shard file cut for layers [0,2)"), std::string::npos)
      << m.status().message();
  // A shard is cut from the whole model, never from another shard.
  auto again = model::shard_writer(*f, s);
  ASSERT_FALSE(again.is_ok());
  EXPECT_NE(again.status().message().find("already a shard file"), std::string::npos);
  // Keys name the source and the shard.
  EXPECT_EQ(model::shard_key(1, 2, s), model::shard_key(1, 2, s));
  EXPECT_NE(model::shard_key(1, 2, s), model::shard_key(1, 2, other));
  EXPECT_NE(model::shard_key(1, 2, s), model::shard_key(3, 2, s));
  EXPECT_EQ(model::shard_key(1, 2, s).size(), 16u);
}

TEST_P(ShardedForward, ExpertParallelTwoAndThreeRanks) {
  if (!hp_.is_moe()) GTEST_SKIP() << "dense model: no experts to spread";
  // Whole experts on each rank (attention heads still split): the router runs on every rank,
  // each runs the chosen experts it holds, the all-reduce sums their outputs.
  expect_close(run({{{0, 4}, {4, 8}}, {}, {}, {{0, 4}, {4, 8}}}));
  expect_close(run({{{0, 2}, {2, 4}, {4, 8}}, {}, {}, {{0, 3}, {3, 5}, {5, 8}}}));
  // Both at once: experts spread over pairs of ranks, each pair slicing its experts' columns.
  expect_close(run({{{0, 2}, {2, 4}, {4, 6}, {6, 8}},
                    {{0, 128}, {128, 256}, {0, 128}, {128, 256}},
                    {},
                    {{0, 4}, {0, 4}, {4, 8}, {4, 8}}}));
}

TEST_P(ShardedForward, ExpertShardFilesHoldOnlyTheirExperts) {
  if (!hp_.is_moe()) GTEST_SKIP() << "dense model: no experts to spread";
  expect_shard_files_identical({{{0, 2}, {2, 4}, {4, 8}}, {}, {}, {{0, 3}, {3, 5}, {5, 8}}});
  // Expert ranges partition the experts: the ranks' shard files hold each expert once.
  uint64_t whole = 0, parts = 0;
  for (const auto& t : file_->tensors())
    if (std::string(t.name).find("_exps.") != std::string::npos) whole += t.bytes;
  for (uint64_t b : shard_expert_bytes_) parts += b;
  EXPECT_EQ(parts, whole);
  // An expert range outside the model is refused with a clear error.
  model::ShardSpec s = model::ShardSpec::whole(hp_);
  s.expert_end = hp_.n_expert + 1;
  auto local = comm::make_local_communicator();
  ThreadPool pool(1);
  auto m = model::Transformer::create(*file_, s, *local, pool, kernels::best(), 6);
  ASSERT_FALSE(m.is_ok());
  EXPECT_NE(m.status().message().find("bad expert range"), std::string::npos)
      << m.status().message();
}

INSTANTIATE_TEST_SUITE_P(Models, ShardedForward,
                         ::testing::Values(ModelCase{DType::kF32}, ModelCase{DType::kQ8_0},
                                           ModelCase{DType::kF32, "qwen3moe", 8, 2},
                                           ModelCase{DType::kQ8_0, "qwen3moe", 8, 2},
                                           ModelCase{DType::kQ4_0, "llama", 8, 2},
                                           ModelCase{DType::kF32, "deepseek2", 8, 2},
                                           ModelCase{DType::kQ8_0, "deepseek2", 8, 2},
                                           ModelCase{DType::kQ8_0, "deepseek2", 8, 2, true}),
                         case_name);

TEST(InProcessGroup, CollectivesAndTimeouts) {
  auto g = comm::make_in_process_group(3);
  std::vector<std::thread> ts;
  std::vector<float> sums(3);
  for (int r = 0; r < 3; ++r) {
    ts.emplace_back([&, r] {
      float v[2] = {float(r), 1.f};
      EXPECT_TRUE(g[r]->all_reduce_sum(v, 2, 5000).is_ok());
      sums[r] = v[0] + 10 * v[1];
      int32_t mine = r * 7, all[3];
      EXPECT_TRUE(g[r]->all_gather(&mine, all, 4, 5000).is_ok());
      EXPECT_EQ(all[2], 14);
      int32_t b = r == 1 ? 99 : 0;
      EXPECT_TRUE(g[r]->broadcast(&b, 4, 1, 5000).is_ok());
      EXPECT_EQ(b, 99);
      EXPECT_TRUE(g[r]->barrier(5000).is_ok());
    });
  }
  for (auto& t : ts) t.join();
  for (float s : sums) EXPECT_EQ(s, 3.f + 30.f);
  // A collective that one rank never joins times out instead of hanging.
  float v = 1;
  Status s = g[0]->all_reduce_sum(&v, 1, 50);
  EXPECT_EQ(s.code(), StatusCode::kTimeout);
  EXPECT_EQ(g[0]->recv(1, &v, 4, 20).code(), StatusCode::kTimeout);
}

}  // namespace
}  // namespace cohort
