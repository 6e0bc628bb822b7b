// The delay decorator (every hop pays the one-way delay, once) and subgroups (a subset of a
// world's ranks as a group of its own).
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstring>

#include "comm/subgroup.h"
#include "comm_harness.h"

namespace cohort::comm {
namespace {

using testing::Group;
using testing::make_tcp_group;
using testing::run_ranks;
using Clock = std::chrono::steady_clock;

int64_t us_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t).count();
}

Group delayed(Group inner, int64_t delay_us) {
  Group g;
  for (auto& c : inner) g.push_back(make_delay_communicator(std::move(c), delay_us));
  return g;
}

TEST(Delay, RoundTripPaysTwoDelays) {
  constexpr int64_t kDelayUs = 2000;
  auto tcp = make_tcp_group(2);
  ASSERT_TRUE(tcp.is_ok()) << tcp.status().message();
  Group g = delayed(std::move(tcp).value(), kDelayUs);
  EXPECT_EQ(g[0]->name(), "delay(tcp)");
  std::vector<int64_t> rtt;
  std::vector<Status> st = run_ranks(2, [&](int r) -> Status {
    for (int i = 0; i < 5; ++i) {
      int32_t v = i;
      if (r == 0) {
        const auto start = Clock::now();
        COHORT_RETURN_IF_ERROR(g[0]->send(1, &v, sizeof(v), 5000));
        COHORT_RETURN_IF_ERROR(g[0]->recv(1, &v, sizeof(v), 5000));
        rtt.push_back(us_since(start));
      } else {
        COHORT_RETURN_IF_ERROR(g[1]->recv(0, &v, sizeof(v), 5000));
        COHORT_RETURN_IF_ERROR(g[1]->send(0, &v, sizeof(v), 5000));
      }
    }
    return Status::ok();
  });
  for (const Status& s : st) ASSERT_TRUE(s.is_ok()) << s.message();
  ASSERT_EQ(rtt.size(), 5u);
  EXPECT_GE(*std::min_element(rtt.begin(), rtt.end()), 2 * kDelayUs);
}

// One step of an exchange pays the delay once, not once per peer: a decode-sized all-reduce
// on 4 ranks costs about one delay; a large one pays one per round (2 x 3 rounds). The upper
// bounds sit between those and what paying per peer would cost (3 and 18 delays). The ranks
// meet at a thread barrier before each timed call, so a thread that starts late is not
// counted, and the delay is long (200 ms) because what else a call costs does not shrink with
// it: CI's TSan build once took 161 ms over the large one's 6 delays, and with two busy loops
// beside it on 2 cores it took up to 195 ms over the small one's delay and 600 ms over the
// large one's (1.98 and 9.0 delays, against bounds of 2.5 and 12).
TEST(Delay, CollectivesPayOneDelayPerHop) {
  constexpr int64_t kDelayUs = 200000;
  Group g = delayed(make_in_process_group(4), kDelayUs);
  std::vector<int64_t> small_us(4), large_us(4);
  std::barrier ready(4);
  std::vector<Status> st = run_ranks(4, [&](int r) -> Status {
    std::vector<float> v(8192, static_cast<float>(r));
    ready.arrive_and_wait();
    auto start = Clock::now();
    COHORT_RETURN_IF_ERROR(g[static_cast<size_t>(r)]->all_reduce_sum(v.data(), v.size(), 10000));
    small_us[static_cast<size_t>(r)] = us_since(start);
    if (v[17] != 6.0f) return Status::internal("small sum");
    std::vector<float> w(100'000, static_cast<float>(r));
    ready.arrive_and_wait();
    start = Clock::now();
    COHORT_RETURN_IF_ERROR(g[static_cast<size_t>(r)]->all_reduce_sum(w.data(), w.size(), 10000));
    large_us[static_cast<size_t>(r)] = us_since(start);
    if (w[99'999] != 6.0f) return Status::internal("large sum");
    return Status::ok();
  });
  for (const Status& s : st) ASSERT_TRUE(s.is_ok()) << s.message();
  for (int r = 0; r < 4; ++r) {
    EXPECT_GE(small_us[static_cast<size_t>(r)], kDelayUs);
    EXPECT_LT(small_us[static_cast<size_t>(r)], 5 * kDelayUs / 2);
    EXPECT_GE(large_us[static_cast<size_t>(r)], 6 * kDelayUs);
    EXPECT_LT(large_us[static_cast<size_t>(r)], 12 * kDelayUs);
  }
}

// Two subgroups of a tcp world of 4 on disjoint pairs, each driven by its own members.
TEST(Subgroup, TensorGroupsInsideAWorld) {
  auto world = make_tcp_group(4);
  ASSERT_TRUE(world.is_ok()) << world.status().message();
  const std::vector<std::vector<int>> groups = {{0, 2}, {3, 1}};
  std::vector<Status> st = run_ranks(4, [&](int w) -> Status {
    const std::vector<int>& members = groups[static_cast<size_t>(w % 2)];
    COHORT_ASSIGN_OR_RETURN(auto sub,
                            make_subgroup(*world.value()[static_cast<size_t>(w)], members));
    const int me = static_cast<int>(std::find(members.begin(), members.end(), w) - members.begin());
    if (sub->rank() != me || sub->size() != 2) return Status::internal("renumbering");
    for (size_t n : {size_t{7}, size_t{1} << 20}) {
      std::vector<float> v(n);
      for (size_t i = 0; i < n; ++i)
        v[i] = static_cast<float>(w * 1000 + static_cast<int>(i % 97)) * 0.1f;
      COHORT_RETURN_IF_ERROR(sub->all_reduce_sum(v.data(), n, 10000));
      for (size_t i = 0; i < n; i += 997) {
        float want = 0.0f;
        for (int m : members)
          want += static_cast<float>(m * 1000 + static_cast<int>(i % 97)) * 0.1f;
        if (v[i] != want) return Status::internal("subgroup sum at " + std::to_string(i));
      }
    }
    int32_t mine = w;
    int32_t all[2] = {-1, -1};
    COHORT_RETURN_IF_ERROR(sub->all_gather(&mine, all, sizeof(mine), 10000));
    if (all[0] != members[0] || all[1] != members[1]) return Status::internal("gather");
    int32_t b = me == 1 ? w : -1;
    COHORT_RETURN_IF_ERROR(sub->broadcast(&b, sizeof(b), 1, 10000));
    if (b != members[1]) return Status::internal("broadcast");
    // Point to point: sub rank 0 -> sub rank 1.
    int32_t msg = w;
    if (me == 0) {
      COHORT_RETURN_IF_ERROR(sub->send(1, &msg, sizeof(msg), 10000));
    } else {
      COHORT_RETURN_IF_ERROR(sub->recv(0, &msg, sizeof(msg), 10000));
      if (msg != members[0]) return Status::internal("p2p");
    }
    return sub->barrier(10000);
  });
  for (size_t w = 0; w < st.size(); ++w) EXPECT_TRUE(st[w].is_ok()) << w << ": " << st[w].message();
}

TEST(Subgroup, OverAWorldWithoutPointToPointOverlap) {
  Group world = make_in_process_group(3);
  std::vector<Status> st = run_ranks(3, [&](int w) -> Status {
    if (w == 1) return Status::ok();  // not a member
    COHORT_ASSIGN_OR_RETURN(auto sub, make_subgroup(*world[static_cast<size_t>(w)], {2, 0}));
    std::vector<float> v(300'000, static_cast<float>(w + 1));
    COHORT_RETURN_IF_ERROR(sub->all_reduce_sum(v.data(), v.size(), 10000));
    return v.back() == 4.0f ? Status::ok() : Status::internal("sum");
  });
  for (const Status& s : st) EXPECT_TRUE(s.is_ok()) << s.message();
}

TEST(Subgroup, RejectsBadRankLists) {
  Group world = make_in_process_group(3);
  Communicator& w1 = *world[1];
  EXPECT_EQ(make_subgroup(w1, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(make_subgroup(w1, {1, 1}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(make_subgroup(w1, {1, 3}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(make_subgroup(w1, {0, 2}).status().code(), StatusCode::kInvalidArgument);
  auto solo = make_subgroup(w1, {1});
  ASSERT_TRUE(solo.is_ok());
  float x = 5;
  EXPECT_TRUE(solo.value()->all_reduce_sum(&x, 1, 100).is_ok());
  EXPECT_EQ(x, 5);
}

TEST(InProcess, CollectiveTimesOutWhenARankNeverComes) {
  Group g = make_in_process_group(2);
  const auto start = Clock::now();
  float x = 1;
  EXPECT_EQ(g[0]->all_reduce_sum(&x, 1, 200).code(), StatusCode::kTimeout);
  EXPECT_LT(us_since(start), 400'000);
}

}  // namespace
}  // namespace cohort::comm
