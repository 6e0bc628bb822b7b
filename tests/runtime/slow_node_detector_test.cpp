// The slow-node rule on made-up step times: a worker persistently over 3x its share's cost
// (and 10 ms over) is named once, after three windows in a row; one that is slower only in
// proportion to a bigger share, only by 2x, only by microseconds, or only now and then is not;
// the head is never named.
#include "runtime/slow_node_detector.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cohort::runtime {
namespace {

// Feeds every node one window of 16 steps at the per-step seconds given (cumulative counts
// kept in steps/busy); returns the verdicts, joined.
struct Feed {
  SlowNodeDetector detector;
  std::vector<int64_t> steps;
  std::vector<double> busy;
  explicit Feed(std::vector<double> weights)
      : detector({"head", "w1", "w2"}, weights), steps(3, 0), busy(3, 0.0) {
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(detector.report(i, 0, 0.0), "");
  }
  std::string window(const std::vector<double>& per_step_s) {
    std::string verdicts;
    for (size_t i = 0; i < 3; ++i) {
      steps[i] += 16;
      busy[i] += 16 * per_step_s[i];
      verdicts += detector.report(i, steps[i], busy[i]);
    }
    return verdicts;
  }
};

TEST(SlowNodeDetector, APersistentlySlowWorkerIsNamedOnceAfterThreeWindows) {
  Feed f({1, 1, 1});
  EXPECT_EQ(f.window({0.004, 0.004, 0.040}), "");
  EXPECT_EQ(f.window({0.004, 0.004, 0.040}), "");
  const std::string verdict = f.window({0.004, 0.004, 0.040});
  EXPECT_NE(verdict.find("w2 is slow: 40.0 ms"), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("10.0x the 4.00 ms"), std::string::npos) << verdict;
  EXPECT_EQ(f.window({0.004, 0.004, 0.040}), "");  // once
}

TEST(SlowNodeDetector, AFastWindowStartsTheCountAgain) {
  Feed f({1, 1, 1});
  EXPECT_EQ(f.window({0.004, 0.004, 0.040}), "");
  EXPECT_EQ(f.window({0.004, 0.004, 0.040}), "");
  EXPECT_EQ(f.window({0.004, 0.004, 0.004}), "");
  EXPECT_EQ(f.window({0.004, 0.004, 0.040}), "");
  EXPECT_EQ(f.window({0.004, 0.004, 0.040}), "");
  EXPECT_NE(f.window({0.004, 0.004, 0.040}), "");
}

TEST(SlowNodeDetector, SlowInProportionToItsShareIsNotSlow) {
  Feed f({1, 1, 4});  // w2 holds four times the bytes: four times the time is as planned
  for (int i = 0; i < 6; ++i) EXPECT_EQ(f.window({0.004, 0.004, 0.016}), "");
}

TEST(SlowNodeDetector, TwiceAsSlowOrMicrosecondsSlowerIsNotSlow) {
  Feed twice({1, 1, 1});
  for (int i = 0; i < 6; ++i) EXPECT_EQ(twice.window({0.010, 0.010, 0.020}), "");
  Feed tiny({1, 1, 1});  // 20x, but 1.9 ms a step: scheduling noise on a small model
  for (int i = 0; i < 6; ++i) EXPECT_EQ(tiny.window({0.0001, 0.0001, 0.002}), "");
}

TEST(SlowNodeDetector, TheHeadIsNeverNamedAndShortWindowsWait) {
  Feed f({1, 1, 1});
  for (int i = 0; i < 6; ++i) EXPECT_EQ(f.window({0.100, 0.004, 0.004}), "");
  SlowNodeDetector d({"head", "w1"}, {1, 1});
  EXPECT_EQ(d.report(0, 0, 0), "");
  EXPECT_EQ(d.report(1, 0, 0), "");
  for (int i = 1; i <= 15; ++i) {  // windows never close below 16 steps
    EXPECT_EQ(d.report(0, i, 0.001 * i), "");
    EXPECT_EQ(d.report(1, i, 0.1 * i), "");
  }
}

}  // namespace
}  // namespace cohort::runtime
