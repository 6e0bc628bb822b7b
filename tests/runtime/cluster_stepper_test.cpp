// Generation driven through ClusterRank over an in-process group (one thread per rank) gives
// the same greedy tokens as one node: the stage protocol (headers, hidden states between
// stages, logits back to rank 0) independent of any network transport.
#include "runtime/cluster_stepper.h"

#include <gtest/gtest.h>

#include <thread>

#include "cluster/model_desc.h"
#include "comm/in_process_group.h"
#include "format/gguf.h"
#include "runtime/generator.h"
#include "support/shared_data.h"
#include "text/tokenizer.h"

namespace cohort {
namespace {

std::vector<int32_t> generate_single(const format::GgufFile& f, const std::vector<int32_t>& prompt,
                                     int n) {
  ThreadPool pool(1);
  auto comm = comm::make_local_communicator();
  auto hp = model::HParams::from_gguf(f);
  auto m =
      model::Transformer::create(f, model::ShardSpec::whole(*hp), *comm, pool, kernels::best(), 8);
  EXPECT_TRUE(m.is_ok());
  auto kv = (*m)->new_cache(256, DType::kF32);
  runtime::Generator gen(**m, *kv, [](int32_t) { return false; });
  text::SamplerConfig sc;
  sc.temperature = 0;
  text::Sampler s(sc, hp->n_vocab);
  std::vector<int32_t> out;
  EXPECT_TRUE(gen.generate(
                     prompt, n, s,
                     [&](int32_t id) {
                       out.push_back(id);
                       return true;
                     },
                     nullptr)
                  .is_ok());
  return out;
}

std::vector<int32_t> generate_cluster(const format::GgufFile& f, const cluster::Plan& plan,
                                      const std::vector<int32_t>& prompt, int n) {
  const int size = static_cast<int>(plan.ranks.size());
  auto world = comm::make_in_process_group(size);
  std::vector<int32_t> out;
  std::vector<Status> st(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      ThreadPool pool(1);
      // Pure tensor: the stage group is the world; pure pipeline: a group of one.
      auto local = comm::make_local_communicator();
      comm::Communicator& tp =
          plan.stage_ranks[plan.ranks[r].stage].size() > 1 ? *world[r] : *local;
      auto m = model::Transformer::create(f, plan.ranks[r].shard, tp, pool, kernels::best(), 8);
      if (!m.is_ok()) {
        st[r] = m.status();
        return;
      }
      auto kv = (*m)->new_cache(256, DType::kF32);
      runtime::ClusterRank cr(plan, r, *world[r], **m, *kv);
      if (r != 0) {
        st[r] = cr.serve(20000);
        return;
      }
      runtime::ClusterStepper stepper(cr, **m, *kv);
      runtime::Generator gen(stepper, [](int32_t) { return false; });
      text::SamplerConfig sc;
      sc.temperature = 0;
      text::Sampler s(sc, (*m)->hparams().n_vocab);
      st[r] = gen.generate(
          prompt, n, s,
          [&](int32_t id) {
            out.push_back(id);
            return true;
          },
          nullptr);
      Status stop = cr.stop();
      if (st[r].is_ok()) st[r] = stop;
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < size; ++r)
    EXPECT_TRUE(st[r].is_ok()) << "rank " << r << ": " << st[r].message();
  return out;
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
  const std::vector<int32_t> want = generate_single(*f, prompt, 80);

  const auto [mode, n_nodes] = GetParam();
  auto md = cluster::describe_model(*f);
  ASSERT_TRUE(md.is_ok()) << md.status().message();
  std::vector<cluster::NodeDesc> nodes(n_nodes, cluster::NodeDesc{"n", 1ull << 30, 1.0});
  cluster::PlanOptions opt;
  opt.mode = mode;
  auto plan =
      cluster::plan_placement(nodes, cluster::LinkMatrix::uniform(n_nodes, 50, 1e9), *md, opt);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(generate_cluster(*f, *plan, prompt, 80), want) << plan->to_string();
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

}  // namespace
}  // namespace cohort
