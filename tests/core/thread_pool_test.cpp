#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
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

TEST(ThreadPool, StepsRunWithBareSpins) {
  ThreadPool::set_spin_pause(false);
  ThreadPool pool(2);
  std::atomic<int> hits{0};
  for (int step = 0; step < 500; ++step) pool.run([&](int, int) { hits.fetch_add(1); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the spin: workers sleep
  pool.run([&](int, int) { hits.fetch_add(1); });
  ThreadPool::set_spin_pause(true);
  EXPECT_EQ(hits.load(), 1002);
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

TEST(ThreadPool, RunSplitCoversRangeOnceInShares) {
  for (int nth : {1, 2, 3}) {
    ThreadPool pool(nth);
    for (int64_t n : {0, 1, 2, 7, 1001}) {
      // Enough work to fork: one call per non-empty share, in split()'s shares.
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int> calls{0};
      pool.run_split(n, ThreadPool::kMinParallelUnits, [&](int64_t b, int64_t e) {
        ASSERT_LT(b, e);
        for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
        calls.fetch_add(1);
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "item " << i;
      EXPECT_EQ(calls.load(), std::min<int64_t>(n, nth)) << n << " items, " << nth << " threads";
      // Too little work: the whole range in one call.
      calls = 0;
      pool.run_split(n, ThreadPool::kMinParallelUnits - 1, [&](int64_t b, int64_t e) {
        EXPECT_EQ(b, 0);
        EXPECT_EQ(e, n);
        calls.fetch_add(1);
      });
      EXPECT_EQ(calls.load(), n > 0 ? 1 : 0);
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

TEST(ThreadPool, StealingRunsEveryChunkOnce) {
  for (int nth : {1, 2, 3, 5}) {
    ThreadPool pool(nth);
    for (int64_t n : {0, 1, 2, 7, 64, 1001}) {
      std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
      pool.run_stealing(n, [&](int ith, int64_t c) {
        EXPECT_GE(ith, 0);
        EXPECT_LT(ith, nth);
        ASSERT_GE(c, 0);
        ASSERT_LT(c, n);
        runs[c].fetch_add(1);
      });
      for (int64_t c = 0; c < n; ++c) ASSERT_EQ(runs[c].load(), 1) << "chunk " << c;
    }
  }
}

TEST(ThreadPool, StealingRunsCoverEveryChunkOnceInFewRuns) {
  for (int nth : {1, 2, 3, 5}) {
    ThreadPool pool(nth);
    for (int64_t n : {0, 1, 2, 7, 64, 4096}) {
      std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
      std::atomic<int64_t> n_runs{0};
      pool.run_stealing_runs(n, [&](int ith, int64_t b, int64_t e) {
        EXPECT_GE(ith, 0);
        EXPECT_LT(ith, nth);
        ASSERT_GE(b, 0);
        ASSERT_LT(b, e);
        ASSERT_LE(e, n);
        for (int64_t c = b; c < e; ++c) runs[c].fetch_add(1);
        n_runs.fetch_add(1);
      });
      for (int64_t c = 0; c < n; ++c) ASSERT_EQ(runs[c].load(), 1) << "chunk " << c;
      // An eighth of what is left at a time (about 8 ln(share / 8) + 8 runs a share, more with
      // each steal), not one run a chunk: here fewer than one run per 4 chunks.
      if (n == 4096) {
        EXPECT_LT(n_runs.load(), n / 4) << nth << " threads";
      }
    }
  }
}

TEST(ThreadPool, StealingTakesTheBackHalfOfASlowShare) {
  // Thread 0's share is chunks [0, 32), thread 1's [32, 64). Thread 0 stalls in chunk 0 until
  // thread 1 has run 40 chunks, which it can only do by finishing its own share and then
  // taking the back half of what thread 0 has left: [16, 32) if thread 0 had not taken its
  // first run yet, else [18, 32) (its first run is [0, 4)), which it works through front to
  // back. Thread 0 meanwhile runs its chunks in ascending order.
  ThreadPool pool(2);
  std::vector<int> owner(64, -1);
  std::vector<int64_t> order0, stolen;
  std::atomic<int> by1{0};
  bool waited_out = false;
  pool.run_stealing(64, [&](int ith, int64_t c) {
    owner[c] = ith;
    if (ith == 0) {
      order0.push_back(c);
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (c == 0 && by1.load() < 40 && !waited_out) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        waited_out = std::chrono::steady_clock::now() > give_up;
      }
      return;
    }
    if (c < 32 && by1.load() < 40) stolen.push_back(c);  // before thread 0 goes on
    by1.fetch_add(1);
  });
  ASSERT_FALSE(waited_out) << "thread 1 did not take thread 0's chunks";
  for (int64_t c = 32; c < 64; ++c) EXPECT_EQ(owner[c], 1) << "chunk " << c;
  ASSERT_EQ(stolen.size(), 8u);
  EXPECT_TRUE(stolen[0] == 16 || stolen[0] == 18) << "first stolen chunk " << stolen[0];
  for (size_t i = 0; i < stolen.size(); ++i) EXPECT_EQ(stolen[i], stolen[0] + int64_t(i));
  // Thread 0 may take back the back half of what thread 1 has left once it goes on, which lies
  // past its own front: its chunks still ascend.
  ASSERT_FALSE(order0.empty());
  EXPECT_EQ(order0[0], 0);
  for (size_t i = 1; i < order0.size(); ++i) EXPECT_LT(order0[i - 1], order0[i]);
}

// With timing on, a step's wall time and each thread's wait at the join are counted: a step
// whose thread 1 works 20 ms while thread 0 returns at once leaves thread 0 waiting about
// 20 ms. Off, nothing is counted.
TEST(ThreadPool, TimingCountsStepsAndJoinWaits) {
  ThreadPool pool(2);
  auto step = [&] {
    pool.run([](int ith, int) {
      if (ith == 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    });
  };
  step();
  EXPECT_EQ(pool.timing().steps, 0);
  pool.set_timing(true);
  step();
  step();
  const ThreadPool::Timing t = pool.timing();
  EXPECT_EQ(t.steps, 2);
  EXPECT_GE(t.step_ns, 40'000'000);
  EXPECT_GE(t.join_wait_ns, 40'000'000);  // thread 0, twice
  EXPECT_LE(t.join_wait_ns, t.step_ns * 2);
  pool.reset_timing();
  EXPECT_EQ(pool.timing().steps, 0);
  pool.set_timing(false);
  step();
  EXPECT_EQ(pool.timing().steps, 0);
  EXPECT_EQ(pool.timing().join_wait_ns, 0);
}

}  // namespace
}  // namespace cohort
