// The head's in-flight window against a transport whose sends block (tests/runtime/
// bounded_group.h): with the window's byte budget equal to what the transport buffers per
// pair, overlapping steps never deadlock; with the budget ignored, the classic cycle (the head
// blocked sending the next step's hidden states to the last stage while that stage is blocked
// sending the previous step's logits to the head) does happen, so the model is faithful.
#include <gtest/gtest.h>

#include "cluster/model_desc.h"
#include "runtime/bounded_group.h"
#include "runtime/in_process_cluster.h"
#include "support/shared_data.h"

namespace cohort {
namespace {

constexpr size_t kCapacity = 1024;  // far below an 8-token chunk's hidden states or logits

cluster::Plan two_stages(const format::GgufFile& f) {
  auto md = cluster::describe_model(f);
  std::vector<cluster::NodeDesc> nodes(2, cluster::NodeDesc{"n", 1ull << 30, 1.0});
  cluster::PlanOptions opt;
  opt.mode = cluster::ParallelMode::kPipeline;
  auto plan = cluster::plan_placement(nodes, cluster::LinkMatrix::uniform(2, 50, 1e9), *md, opt);
  EXPECT_TRUE(plan.is_ok());
  return *plan;
}

// Two prefill chunks on two slots submitted back to back (all logits of the first: 8 rows),
// then decode steps of both slots kept in flight; returns the first error.
Status overlap(runtime::Stepper& s) {
  const int64_t V = s.n_vocab();
  std::vector<int32_t> chunk(8);
  for (int i = 0; i < 8; ++i) chunk[i] = 10 + i;
  std::vector<float> all(8 * V), last(V);
  COHORT_RETURN_IF_ERROR(s.submit(0, chunk.data(), 8, 0, true));
  COHORT_RETURN_IF_ERROR(s.submit(1, chunk.data(), 8, 0, false));
  COHORT_RETURN_IF_ERROR(s.collect(all.data()));
  COHORT_RETURN_IF_ERROR(s.collect(last.data()));
  for (int64_t pos = 8; pos < 40; ++pos) {
    const int32_t t = static_cast<int32_t>(pos);
    COHORT_RETURN_IF_ERROR(s.submit(0, &t, 1, pos, false));
    COHORT_RETURN_IF_ERROR(s.submit(1, &t, 1, pos, false));
    COHORT_RETURN_IF_ERROR(s.collect(last.data()));
    COHORT_RETURN_IF_ERROR(s.collect(last.data()));
  }
  return Status::ok();
}

TEST(PipelineWindow, BudgetKeepsBlockingSendsFromDeadlocking) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  auto f = format::GgufFile::open(testing::kSharedData + "/models/stories260K.gguf");
  ASSERT_TRUE(f.is_ok());
  testing::ClusterHarness h;
  h.make_world = [](int n) { return testing::BoundedGroup::make(n, kCapacity, 2000); };
  h.window_bytes = kCapacity;
  Status st = testing::run_in_process_cluster(*f, two_stages(*f), 2, overlap, h);
  EXPECT_TRUE(st.is_ok()) << st.message();
}

TEST(PipelineWindow, WithoutTheBudgetTheModelDeadlocks) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  auto f = format::GgufFile::open(testing::kSharedData + "/models/stories260K.gguf");
  ASSERT_TRUE(f.is_ok());
  testing::ClusterHarness h;
  h.make_world = [](int n) { return testing::BoundedGroup::make(n, kCapacity, 300); };
  h.window_bytes = int64_t{1} << 40;  // only the count of steps in flight is bounded
  Status st = testing::run_in_process_cluster(*f, two_stages(*f), 2, overlap, h);
  EXPECT_EQ(st.code(), StatusCode::kTimeout) << st.message();
}

}  // namespace
}  // namespace cohort
