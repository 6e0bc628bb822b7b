// Generation driven through ClusterRank over an in-process group (one thread per rank) gives
// the same greedy tokens as one node: the stage protocol (headers, hidden states between
// stages, logits back to rank 0) independent of any network transport. With sequence slots,
// steps of several sequences submitted and collected in any interleaving give exactly the
// logits each sequence gets alone.
#include "runtime/cluster_stepper.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <random>
#include <thread>

#include "cluster/model_desc.h"
#include "comm/in_process_group.h"
#include "format/gguf.h"
#include "runtime/generator.h"
#include "runtime/in_process_cluster.h"
#include "support/shared_data.h"
#include "text/tokenizer.h"

namespace cohort {
namespace {

using testing::kTestBatch;
using testing::kTestCtx;

std::vector<int32_t> generate(runtime::Stepper& stepper, const std::vector<int32_t>& prompt, int n,
                              Status* st) {
  runtime::Generator gen(stepper, [](int32_t) { return false; });
  text::SamplerConfig sc;
  sc.temperature = 0;
  text::Sampler s(sc, static_cast<int32_t>(stepper.n_vocab()));
  std::vector<int32_t> out;
  *st = gen.generate(
      prompt, n, s,
      [&](int32_t id) {
        out.push_back(id);
        return true;
      },
      nullptr);
  return out;
}

// The whole model on one node, one thread: `run` gets its stepper.
void with_one_node(const format::GgufFile& f, int64_t n_slots,
                   const std::function<void(runtime::Stepper&)>& run) {
  ThreadPool pool(1);
  auto comm = comm::make_local_communicator();
  auto hp = model::HParams::from_gguf(f);
  ASSERT_TRUE(hp.is_ok());
  auto m = model::Transformer::create(f, model::ShardSpec::whole(*hp), *comm, pool, kernels::best(),
                                      kTestBatch);
  ASSERT_TRUE(m.is_ok());
  std::vector<model::KvCache> slots;
  for (int64_t s = 0; s < n_slots; ++s) slots.push_back(*(*m)->new_cache(kTestCtx, DType::kF32));
  runtime::LocalStepper stepper(**m, slots);
  run(stepper);
}

cluster::Plan make_plan(const format::GgufFile& f, cluster::ParallelMode mode, int n_nodes,
                        int tp_group_size = 0) {
  auto md = cluster::describe_model(f);
  EXPECT_TRUE(md.is_ok()) << md.status().message();
  std::vector<cluster::NodeDesc> nodes(n_nodes, cluster::NodeDesc{"n", 1ull << 30, 1.0});
  cluster::PlanOptions opt;
  opt.mode = mode;
  opt.tp_group_size = tp_group_size;
  auto plan =
      cluster::plan_placement(nodes, cluster::LinkMatrix::uniform(n_nodes, 50, 1e9), *md, opt);
  EXPECT_TRUE(plan.is_ok()) << plan.status().message();
  return plan.is_ok() ? *plan : cluster::Plan{};
}

class ClusterStepperTest : public ::testing::TestWithParam<std::pair<cluster::ParallelMode, int>> {
};

TEST_P(ClusterStepperTest, StoriesGreedyTokensMatchOneNode) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  auto f = format::GgufFile::open(testing::kSharedData + "/models/stories260K.gguf");
  ASSERT_TRUE(f.is_ok());
  auto tok = text::Tokenizer::from_gguf(*f);
  ASSERT_TRUE(tok.is_ok());
  const std::vector<int32_t> prompt = (*tok)->encode("Once upon a time", true, false);
  std::vector<int32_t> want;
  with_one_node(*f, 1, [&](runtime::Stepper& s) {
    Status st;
    want = generate(s, prompt, 80, &st);
    EXPECT_TRUE(st.is_ok()) << st.message();
  });

  const auto [mode, n_nodes] = GetParam();
  const cluster::Plan plan = make_plan(*f, mode, n_nodes);
  std::vector<int32_t> got;
  Status st = testing::run_in_process_cluster(*f, plan, 1, [&](runtime::Stepper& s) {
    Status gs;
    got = generate(s, prompt, 80, &gs);
    return gs;
  });
  EXPECT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(got, want) << plan.to_string();
}

// Rounds of batched steps over three slots at different positions (one slot's prompt chunk
// riding along with the others' decode tokens), two rounds in flight at a time.
std::vector<std::vector<runtime::StepEntry>> batch_rounds(std::vector<int32_t>& tokens) {
  tokens.resize(64);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>(1 + (i * 37) % 500);
  std::vector<std::vector<runtime::StepEntry>> rounds;
  rounds.push_back({{0, &tokens[0], 5, 0}, {1, &tokens[5], 3, 0}});
  for (int64_t r = 0; r < 6; ++r) {
    std::vector<runtime::StepEntry> round = {{0, &tokens[10 + r], 1, 5 + r},
                                             {1, &tokens[20 + r], 1, 3 + r}};
    if (r == 2) round.push_back({2, &tokens[30], 4, 0});
    if (r > 2) round.push_back({2, &tokens[40 + r], 1, 4 + r - 3});
    rounds.push_back(round);
  }
  return rounds;
}

// Every entry's logits, in order: each entry stepped alone, or each round as one batch.
Status run_rounds(runtime::Stepper& s, bool batched, std::vector<float>* out) {
  std::vector<int32_t> tokens;
  const auto rounds = batch_rounds(tokens);
  const size_t V = static_cast<size_t>(s.n_vocab());
  std::vector<float> logits(4 * V);
  std::deque<size_t> in_flight;
  for (size_t r = 0; r < rounds.size(); ++r) {
    if (!batched) {
      for (const runtime::StepEntry& e : rounds[r]) {
        COHORT_RETURN_IF_ERROR(s.step(e.slot, e.tokens, e.n, e.pos0, false, logits.data()));
        out->insert(out->end(), logits.begin(), logits.begin() + V);
      }
      continue;
    }
    COHORT_RETURN_IF_ERROR(s.submit_batch(rounds[r]));
    in_flight.push_back(rounds[r].size());
    while (in_flight.size() > 2 || (r + 1 == rounds.size() && !in_flight.empty())) {
      const size_t n = in_flight.front();
      in_flight.pop_front();
      COHORT_RETURN_IF_ERROR(s.collect_batch(static_cast<int64_t>(n), logits.data()));
      out->insert(out->end(), logits.begin(), logits.begin() + n * V);
    }
  }
  return Status::ok();
}

// got equals want but for rounding: tensor parallelism sums partial products in another
// order, so every value may differ by 1e-4 of the largest.
void expect_rounding_only(const std::vector<float>& got, const std::vector<float>& want,
                          const cluster::Plan& plan) {
  ASSERT_EQ(got.size(), want.size());
  double diff = 0, mag = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(got[i] - want[i])));
    mag = std::max(mag, static_cast<double>(std::fabs(want[i])));
  }
  EXPECT_LE(diff, 1e-4 * mag) << plan.to_string();
}

TEST_P(ClusterStepperTest, BatchedStepsMatchSingleStepsOnOneNode) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  auto f = format::GgufFile::open(testing::kSharedData + "/models/stories260K.gguf");
  ASSERT_TRUE(f.is_ok());
  std::vector<float> want, got;
  with_one_node(*f, 3,
                [&](runtime::Stepper& s) { ASSERT_TRUE(run_rounds(s, false, &want).is_ok()); });
  const auto [mode, n_nodes] = GetParam();
  const cluster::Plan plan = make_plan(*f, mode, n_nodes);
  Status st = testing::run_in_process_cluster(*f, plan, 3, [&](runtime::Stepper& s) {
    // A malformed batch is refused on the head, before anything reaches the workers.
    const int32_t t = 1;
    const std::vector<runtime::StepEntry> twice = {{0, &t, 1, 0}, {0, &t, 1, 1}};
    EXPECT_EQ(s.submit_batch(twice).code(), StatusCode::kInvalidArgument);
    const std::vector<runtime::StepEntry> no_slot = {{3, &t, 1, 0}};
    EXPECT_EQ(s.submit_batch(no_slot).code(), StatusCode::kInvalidArgument);
    return run_rounds(s, true, &got);
  });
  ASSERT_TRUE(st.is_ok()) << st.message();
  expect_rounding_only(got, want, plan);
}

// Embedding steps: a 20-token prompt's normed hidden states in chunks of kTestBatch (a step
// of another slot in flight meanwhile, kept for collect()), then the next token's logits on
// the same slot, which read the cache the hidden steps filled. Appended to *out in order.
Status run_hidden(runtime::Stepper& s, std::vector<float>* out) {
  std::vector<int32_t> tokens(20);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>(1 + (i * 37) % 500);
  const int64_t n = static_cast<int64_t>(tokens.size()), dim = s.n_embd();
  std::vector<float> hidden(static_cast<size_t>(kTestBatch * dim));
  std::vector<float> logits(static_cast<size_t>(s.n_vocab()));
  const int32_t other = 7;
  COHORT_RETURN_IF_ERROR(s.submit(1, &other, 1, 0, false));
  for (int64_t pos = 0; pos < n; pos += kTestBatch) {
    const int64_t rows = std::min(kTestBatch, n - pos);
    COHORT_RETURN_IF_ERROR(s.step_hidden(0, tokens.data() + pos, rows, pos, hidden.data()));
    out->insert(out->end(), hidden.begin(), hidden.begin() + rows * dim);
  }
  COHORT_RETURN_IF_ERROR(s.collect(logits.data()));
  out->insert(out->end(), logits.begin(), logits.end());
  const int32_t next = 42;
  COHORT_RETURN_IF_ERROR(s.step(0, &next, 1, n, false, logits.data()));
  out->insert(out->end(), logits.begin(), logits.end());
  return Status::ok();
}

TEST_P(ClusterStepperTest, HiddenStatesMatchOneNode) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  auto f = format::GgufFile::open(testing::kSharedData + "/models/stories260K.gguf");
  ASSERT_TRUE(f.is_ok());
  std::vector<float> want, got;
  with_one_node(*f, 2, [&](runtime::Stepper& s) {
    EXPECT_EQ(s.n_embd(), model::HParams::from_gguf(*f)->dim);
    const Status st = run_hidden(s, &want);
    EXPECT_TRUE(st.is_ok()) << st.message();
  });
  const auto [mode, n_nodes] = GetParam();
  const cluster::Plan plan = make_plan(*f, mode, n_nodes);
  Status st = testing::run_in_process_cluster(
      *f, plan, 2, [&](runtime::Stepper& s) { return run_hidden(s, &got); });
  ASSERT_TRUE(st.is_ok()) << st.message();
  expect_rounding_only(got, want, plan);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, ClusterStepperTest,
    ::testing::Values(std::make_pair(cluster::ParallelMode::kTensor, 2),
                      std::make_pair(cluster::ParallelMode::kTensor, 3),
                      std::make_pair(cluster::ParallelMode::kTensor, 4),
                      std::make_pair(cluster::ParallelMode::kPipeline, 2),
                      std::make_pair(cluster::ParallelMode::kPipeline, 3),
                      std::make_pair(cluster::ParallelMode::kPipeline, 5)),
    [](const ::testing::TestParamInfo<std::pair<cluster::ParallelMode, int>>& p) {
      return std::string(cluster::parallel_mode_name(p.param.first)) +
             std::to_string(p.param.second);
    });

// One sequence's steps: prompt chunks (one of them asking for every token's logits), then
// single decode tokens, all at consecutive positions.
struct Script {
  struct Step {
    std::vector<int32_t> tokens;
    int64_t pos0;
    bool all_logits;
  };
  std::vector<Step> steps;
};

std::vector<Script> make_scripts(int64_t n_vocab) {
  const std::vector<std::vector<int64_t>> chunk_sizes = {{8, 3}, {5}, {8, 8, 2}};
  std::mt19937 rng(1234);
  std::vector<Script> scripts;
  for (size_t k = 0; k < chunk_sizes.size(); ++k) {
    Script s;
    int64_t pos = 0;
    auto add = [&](int64_t n, bool all) {
      Script::Step st{{}, pos, all};
      for (int64_t i = 0; i < n; ++i) st.tokens.push_back(static_cast<int32_t>(rng() % n_vocab));
      pos += n;
      s.steps.push_back(std::move(st));
    };
    for (size_t c = 0; c < chunk_sizes[k].size(); ++c) add(chunk_sizes[k][c], c == 0 && k == 1);
    for (int i = 0; i < 7; ++i) add(1, false);
    scripts.push_back(std::move(s));
  }
  return scripts;
}

using ScriptLogits = std::vector<std::vector<std::vector<float>>>;  // [script][step] -> logits

size_t logits_size(const Script::Step& st, int64_t n_vocab) {
  return (st.all_logits ? st.tokens.size() : 1) * static_cast<size_t>(n_vocab);
}

// Every script alone on slot 0, synchronous steps.
Status run_alone(runtime::Stepper& s, const std::vector<Script>& scripts, ScriptLogits* out) {
  out->assign(scripts.size(), {});
  for (size_t k = 0; k < scripts.size(); ++k) {
    for (const Script::Step& st : scripts[k].steps) {
      std::vector<float> l(logits_size(st, s.n_vocab()));
      COHORT_RETURN_IF_ERROR(s.step(0, st.tokens.data(), static_cast<int64_t>(st.tokens.size()),
                                    st.pos0, st.all_logits, l.data()));
      (*out)[k].push_back(std::move(l));
    }
  }
  return Status::ok();
}

// Script k on slot (n - 1 - k); a seeded random mix of submit (mostly), synchronous step and
// collect, so steps of one slot are often in flight together and the window fills and
// drains in every way.
Status run_interleaved(runtime::Stepper& s, const std::vector<Script>& scripts, ScriptLogits* out) {
  const size_t n = scripts.size();
  out->assign(n, {});
  for (size_t k = 0; k < n; ++k) out->at(k).resize(scripts[k].steps.size());
  std::vector<size_t> next(n, 0);
  std::deque<std::pair<size_t, size_t>> in_flight;  // (script, step)
  std::mt19937 rng(42);
  auto left = [&] {
    std::vector<size_t> ks;
    for (size_t k = 0; k < n; ++k)
      if (next[k] < scripts[k].steps.size()) ks.push_back(k);
    return ks;
  };
  for (;;) {
    const std::vector<size_t> ks = left();
    if (ks.empty() && in_flight.empty()) break;
    const unsigned r = rng() % 10;
    if (!ks.empty() && (r < 6 || in_flight.empty())) {
      const size_t k = ks[rng() % ks.size()];
      const size_t i = next[k]++;
      const Script::Step& st = scripts[k].steps[i];
      const int64_t slot = static_cast<int64_t>(n - 1 - k);
      std::vector<float>& l = out->at(k)[i];
      l.resize(logits_size(st, s.n_vocab()));
      if (r == 0) {
        COHORT_RETURN_IF_ERROR(s.step(slot, st.tokens.data(),
                                      static_cast<int64_t>(st.tokens.size()), st.pos0,
                                      st.all_logits, l.data()));
      } else {
        COHORT_RETURN_IF_ERROR(s.submit(slot, st.tokens.data(),
                                        static_cast<int64_t>(st.tokens.size()), st.pos0,
                                        st.all_logits));
        in_flight.emplace_back(k, i);
      }
    } else {
      const auto [k, i] = in_flight.front();
      in_flight.pop_front();
      COHORT_RETURN_IF_ERROR(s.collect(out->at(k)[i].data()));
    }
  }
  return Status::ok();
}

struct SlotCase {
  cluster::ParallelMode mode;
  int n_nodes;
  int tp_group_size;
  bool exact_to_one_node;  // pipeline: every layer is computed whole, as on one node
};

void PrintTo(const SlotCase& c, std::ostream* os) {
  *os << cluster::parallel_mode_name(c.mode) << " on " << c.n_nodes << " nodes";
}

class ClusterSlotsTest : public ::testing::TestWithParam<SlotCase> {};

TEST_P(ClusterSlotsTest, InterleavedSequencesMatchEachAlone) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  auto f = format::GgufFile::open(testing::kSharedData + "/models/stories260K.gguf");
  ASSERT_TRUE(f.is_ok());
  const SlotCase c = GetParam();
  const cluster::Plan plan = make_plan(*f, c.mode, c.n_nodes, c.tp_group_size);
  ASSERT_EQ(plan.n_stages(), c.mode == cluster::ParallelMode::kPipeline ? c.n_nodes
                             : c.mode == cluster::ParallelMode::kTensor ? 1
                                                                        : 2)
      << plan.to_string();
  auto hp = model::HParams::from_gguf(*f);
  ASSERT_TRUE(hp.is_ok());
  const std::vector<Script> scripts = make_scripts(hp->n_vocab);

  // The reference: one node, or (when sums are split across ranks) this plan, each alone.
  ScriptLogits want, got;
  if (c.exact_to_one_node) {
    with_one_node(*f, 1, [&](runtime::Stepper& s) {
      Status st = run_alone(s, scripts, &want);
      EXPECT_TRUE(st.is_ok()) << st.message();
    });
  } else {
    Status st = testing::run_in_process_cluster(
        *f, plan, 1, [&](runtime::Stepper& s) { return run_alone(s, scripts, &want); });
    ASSERT_TRUE(st.is_ok()) << st.message();
  }
  Status st = testing::run_in_process_cluster(*f, plan, 3, [&](runtime::Stepper& s) {
    EXPECT_EQ(s.n_slots(), 3);
    EXPECT_EQ(s.max_in_flight(), plan.n_stages());
    return run_interleaved(s, scripts, &got);
  });
  ASSERT_TRUE(st.is_ok()) << st.message();
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(got[k].size(), want[k].size());
    for (size_t i = 0; i < want[k].size(); ++i) {
      EXPECT_EQ(got[k][i], want[k][i]) << "sequence " << k << " step " << i << "\n"
                                       << plan.to_string();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Plans, ClusterSlotsTest,
                         ::testing::Values(SlotCase{cluster::ParallelMode::kPipeline, 2, 0, true},
                                           SlotCase{cluster::ParallelMode::kPipeline, 3, 0, true},
                                           SlotCase{cluster::ParallelMode::kTensor, 2, 0, false},
                                           SlotCase{cluster::ParallelMode::kHybrid, 4, 2, false}),
                         [](const ::testing::TestParamInfo<SlotCase>& p) {
                           return std::string(cluster::parallel_mode_name(p.param.mode)) +
                                  std::to_string(p.param.n_nodes);
                         });

// A worker refuses a step header that names no slot it has: kCorrupt, not a crash or a
// write past its caches. The head's side is played by hand, with the header's wire layout
// (op u32 = 1, all_logits u32, n_tokens i64, pos0 i64, slot i64).
TEST(ClusterRankTest, WorkerRefusesABadSlot) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  auto f = format::GgufFile::open(testing::kSharedData + "/models/stories260K.gguf");
  ASSERT_TRUE(f.is_ok());
  const cluster::Plan plan = make_plan(*f, cluster::ParallelMode::kPipeline, 2);
  for (int64_t bad_slot : {int64_t{2}, int64_t{-1}, int64_t{1} << 40}) {
    auto world = comm::make_in_process_group(2);
    Status served;
    std::thread worker([&] {
      ThreadPool pool(1);
      auto local = comm::make_local_communicator();
      auto m = model::Transformer::create(*f, plan.ranks[1].shard, *local, pool, kernels::best(),
                                          kTestBatch);
      ASSERT_TRUE(m.is_ok());
      std::vector<model::KvCache> slots;
      for (int s = 0; s < 2; ++s) slots.push_back(*(*m)->new_cache(kTestCtx, DType::kF32));
      runtime::ClusterRank cr(plan, 1, *world[1], **m, slots);
      served = cr.serve(5000);
    });
    struct {
      uint32_t op = 1, all_logits = 0;
      int64_t n_tokens = 1, pos0 = 0, slot;
    } h;
    h.slot = bad_slot;
    static_assert(sizeof(h) == 32);
    ASSERT_TRUE(world[0]->broadcast(&h, sizeof(h), 0, 5000).is_ok());
    worker.join();
    EXPECT_EQ(served.code(), StatusCode::kCorrupt) << bad_slot << ": " << served.message();
  }
}

}  // namespace
}  // namespace cohort
