// The engine's live figures and the cluster event ring.
#include <gtest/gtest.h>

#include "runtime/event_log.h"
#include "runtime/serving_stats.h"

namespace cohort::runtime {
namespace {

TEST(ServingStats, CountsRequestsTokensAndSplitsSlotsFromQueue) {
  ServingStats stats(/*n_slots=*/2, /*window_s=*/10.0);
  for (int i = 0; i < 3; ++i) stats.request_started(5);
  for (int i = 0; i < 20; ++i) stats.token_generated();
  EngineStats s = stats.snapshot();
  EXPECT_EQ(s.requests_total, 3);
  EXPECT_EQ(s.prompt_tokens, 15);
  EXPECT_EQ(s.generated_tokens, 20);
  EXPECT_EQ(s.in_flight, 3);
  EXPECT_EQ(s.active_slots, 2);
  EXPECT_EQ(s.queue_depth, 1);
  EXPECT_DOUBLE_EQ(s.tokens_per_s, 2.0);  // 20 tokens over the 10 s window
  stats.request_ended("ok");
  stats.request_ended("cancelled");
  stats.request_ended("failed");
  s = stats.snapshot();
  EXPECT_EQ(s.in_flight, 0);
  EXPECT_EQ(s.queue_depth, 0);
  EXPECT_EQ(s.requests_ok, 1);
  EXPECT_EQ(s.requests_cancelled, 1);
  EXPECT_EQ(s.requests_failed, 1);
}

TEST(EventLog, KeepsTheNewestInOrderWithSequenceNumbers) {
  EventLog log(3);
  for (int i = 0; i < 5; ++i) log.append("k", std::to_string(i));
  const std::vector<ClusterEvent> e = log.recent();
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].message, "2");
  EXPECT_EQ(e[2].message, "4");
  EXPECT_EQ(e[2].seq, 5u);
  EXPECT_GT(e[0].unix_ms, 0);
}

}  // namespace
}  // namespace cohort::runtime
