#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace cohort {
namespace {

TEST(ThreadPool, EveryThreadRunsOncePerStep) {
  ThreadPool pool(3);
  ASSERT_EQ(pool.size(), 3);
  for (int step = 0; step < 2000; ++step) {
    std::vector<std::atomic<int>> hits(3);
    pool.run([&](int ith, int nth) {
      EXPECT_EQ(nth, 3);
      hits[ith].fetch_add(1);
    });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
}

TEST(ThreadPool, SplitCoversRangeExactly) {
  for (int64_t n : {0, 1, 7, 64, 1001}) {
    for (int nth : {1, 2, 3, 8}) {
      int64_t expect_begin = 0;
      for (int i = 0; i < nth; ++i) {
        int64_t b, e;
        ThreadPool::split(n, i, nth, &b, &e);
        EXPECT_EQ(b, expect_begin);
        EXPECT_LE(e - b, n / nth + 1);
        expect_begin = e;
      }
      EXPECT_EQ(expect_begin, n);
    }
  }
}

TEST(ThreadPool, SumsInParallelAfterIdleSleep) {
  ThreadPool pool(2);
  std::vector<int64_t> v(100000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(i);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // workers go to sleep
  std::atomic<int64_t> total{0};
  pool.run([&](int ith, int nth) {
    int64_t b, e, s = 0;
    ThreadPool::split(static_cast<int64_t>(v.size()), ith, nth, &b, &e);
    for (int64_t i = b; i < e; ++i) s += v[i];
    total += s;
  });
  EXPECT_EQ(total.load(), 99999LL * 100000 / 2);
}

}  // namespace
}  // namespace cohort
