// The counting decorator forwards every call unchanged and counts one operation, the named
// payload bytes and the time spent per call.
#include "comm/counting_communicator.h"

#include <gtest/gtest.h>

#include <vector>

#include "comm/delay_communicator.h"
#include "comm_harness.h"

namespace cohort::comm {
namespace {

using testing::Group;
using testing::make_tcp_group;
using testing::run_ranks;

TEST(Counting, CountsOpsBytesAndForwardsResults) {
  auto tcp = make_tcp_group(2);
  ASSERT_TRUE(tcp.is_ok()) << tcp.status().message();
  std::vector<std::shared_ptr<CommCounters>> counters;
  Group g;
  for (auto& c : *tcp) {
    counters.push_back(std::make_shared<CommCounters>());
    g.push_back(make_counting_communicator(std::move(c), counters.back()));
  }
  EXPECT_EQ(g[0]->name(), "tcp");
  std::vector<float> sums(2);
  std::vector<Status> st = run_ranks(2, [&](int r) -> Status {
    std::vector<float> v(8, static_cast<float>(r + 1));
    COHORT_RETURN_IF_ERROR(g[r]->all_reduce_sum(v.data(), v.size(), 5000));
    sums[r] = v[7];
    int32_t x = 41;
    if (r == 0) COHORT_RETURN_IF_ERROR(g[0]->send(1, &x, sizeof(x), 5000));
    if (r == 1) COHORT_RETURN_IF_ERROR(g[1]->recv(0, &x, sizeof(x), 5000));
    COHORT_RETURN_IF_ERROR(g[r]->broadcast(&x, sizeof(x), 0, 5000));
    return g[r]->barrier(5000);
  });
  for (const Status& s : st) ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(sums[0], 3.0f);
  EXPECT_EQ(sums[1], 3.0f);
  for (int r = 0; r < 2; ++r) {
    const CommTotals t = counters[r]->totals();
    EXPECT_EQ(t.ops, 4) << "rank " << r;
    EXPECT_EQ(t.bytes, 8 * 4 + 4 + 4) << "rank " << r;
    EXPECT_GT(t.ns, 0) << "rank " << r;
  }
}

// Time spent waiting in the wrapped communicator is counted: a delayed send takes at least
// the delay, and the difference of two snapshots is the traffic between them.
TEST(Counting, TimeIncludesTheWrappedDelay) {
  constexpr int64_t kDelayUs = 3000;
  auto tcp = make_tcp_group(2);
  ASSERT_TRUE(tcp.is_ok()) << tcp.status().message();
  auto c0 = std::make_shared<CommCounters>();
  Group g;
  g.push_back(
      make_counting_communicator(make_delay_communicator(std::move((*tcp)[0]), kDelayUs), c0));
  g.push_back(std::move((*tcp)[1]));
  const CommTotals before = c0->totals();
  std::vector<Status> st = run_ranks(2, [&](int r) -> Status {
    int32_t x = 7;
    if (r == 0) return g[0]->send(1, &x, sizeof(x), 5000);
    return g[1]->recv(0, &x, sizeof(x), 5000);
  });
  for (const Status& s : st) ASSERT_TRUE(s.is_ok()) << s.message();
  const CommTotals d = c0->totals() - before;
  EXPECT_EQ(d.ops, 1);
  EXPECT_EQ(d.bytes, 4);
  EXPECT_GE(d.ns, kDelayUs * 1000);
}

}  // namespace
}  // namespace cohort::comm
