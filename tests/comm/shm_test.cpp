// shm: group formation, timeouts, peers that leave or die (threads and fork()ed processes),
// and collectives across real processes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "comm_harness.h"

namespace cohort::comm {
namespace {

using testing::make_shm_group;
using testing::ms_since;
using testing::run_ranks;
using testing::unique_shm_name;
using Clock = std::chrono::steady_clock;

bool shm_name_exists(const std::string& name) {
  const int fd = ::shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

TEST(Shm, NameIsUnlinkedOnceAllJoined) {
  const std::string name = unique_shm_name();
  std::vector<std::unique_ptr<Communicator>> group(3);
  std::vector<Status> st = run_ranks(3, [&](int r) -> Status {
    auto c = make_shm_communicator(name, r, 3, 5000);
    if (!c.is_ok()) return c.status();
    group[static_cast<size_t>(r)] = std::move(c).value();
    return Status::ok();
  });
  for (const Status& s : st) ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_FALSE(shm_name_exists(name));
  EXPECT_EQ(group[1]->name(), "shm");
}

TEST(Shm, RankThatNeverJoinsTimesOut) {
  const std::string name = unique_shm_name();
  const auto start = Clock::now();
  std::vector<Status> st = run_ranks(2, [&](int r) {  // of 3; rank 2 never comes
    return make_shm_communicator(name, r, 3, 300).status();
  });
  for (const Status& s : st) {
    EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.message();
    EXPECT_NE(s.message().find("rank(s) 2"), std::string::npos) << s.message();
    EXPECT_EQ(s.message().rfind("shm: ", 0), 0u) << s.message();
  }
  EXPECT_LT(ms_since(start), 600);
  EXPECT_FALSE(shm_name_exists(name));  // the creator cleaned up
}

TEST(Shm, MismatchedGroupIsAnError) {
  const std::string name = unique_shm_name();
  std::vector<Status> st = run_ranks(
      2, [&](int r) { return make_shm_communicator(name, r, r == 0 ? 2 : 3, 500).status(); });
  // One of them created the segment for its size; the other is refused (or both time out if
  // the refused one was the creator's only partner).
  EXPECT_FALSE(st[0].is_ok());
  EXPECT_FALSE(st[1].is_ok());
  EXPECT_TRUE(st[0].code() == StatusCode::kInvalidArgument ||
              st[1].code() == StatusCode::kInvalidArgument)
      << st[0].message() << " / " << st[1].message();
  ::shm_unlink(name.c_str());
}

TEST(Shm, RecvTimeoutLeavesTheLinkUsable) {
  auto g = make_shm_group(2);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto& group = g.value();
  float x = 0;
  const auto start = Clock::now();
  const Status st = group[0]->recv(1, &x, sizeof(x), 200);
  EXPECT_EQ(st.code(), StatusCode::kTimeout) << st.message();
  EXPECT_GE(ms_since(start), 195);
  EXPECT_LT(ms_since(start), 400);
  const float y = 42;
  ASSERT_TRUE(group[1]->send(0, &y, sizeof(y), 1000).is_ok());
  ASSERT_TRUE(group[0]->recv(1, &x, sizeof(x), 1000).is_ok());
  EXPECT_EQ(x, 42);
}

TEST(Shm, ClosedPeerIsUnavailableQuickly) {
  auto g = make_shm_group(3);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto& group = g.value();
  group[2].reset();
  const auto start = Clock::now();
  std::vector<Status> st = run_ranks(2, [&](int r) {
    std::vector<float> v(100, 1.0f);
    return group[static_cast<size_t>(r)]->all_reduce_sum(v.data(), v.size(), 10000);
  });
  for (const Status& s : st) {
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.message();
    EXPECT_NE(s.message().find("rank 2 left"), std::string::npos) << s.message();
  }
  EXPECT_LT(ms_since(start), 1000);
}

TEST(Shm, MessageLeftBeforeLeavingIsStillDelivered) {
  auto g = make_shm_group(2);
  ASSERT_TRUE(g.is_ok());
  auto& group = g.value();
  const int32_t v = 7;
  ASSERT_TRUE(group[1]->send(0, &v, sizeof(v), 1000).is_ok());
  group[1].reset();
  int32_t got = 0;
  ASSERT_TRUE(group[0]->recv(1, &got, sizeof(got), 1000).is_ok());
  EXPECT_EQ(got, 7);
  EXPECT_EQ(group[0]->recv(1, &got, sizeof(got), 1000).code(), StatusCode::kUnavailable);
}

std::vector<float> shm_input(int rank, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>((i * 37 + static_cast<size_t>(rank) * 11) % 101) * 0.013f - 0.6f;
  return v;
}

// Rank `rank` of a forked group: all-reduces of a decode size and a large size must equal
// the rank-ordered sum. Returns the child's exit code.
int forked_rank(const std::string& name, int rank, int size) {
  auto c = make_shm_communicator(name, rank, size, 10000);
  if (!c.is_ok()) return 10;
  for (size_t n : {size_t{8192}, size_t{1} << 20}) {
    std::vector<float> v = shm_input(rank, n);
    if (!c.value()->all_reduce_sum(v.data(), n, 10000).is_ok()) return 11;
    std::vector<float> want(n, 0.0f);
    for (int r = 0; r < size; ++r) {
      const std::vector<float> x = shm_input(r, n);
      for (size_t i = 0; i < n; ++i) want[i] += x[i];
    }
    if (std::memcmp(v.data(), want.data(), n * sizeof(float)) != 0) return 12;
  }
  if (!c.value()->barrier(10000).is_ok()) return 13;
  return 0;
}

TEST(ShmProcesses, CollectivesAcrossForkedProcesses) {
  const std::string name = unique_shm_name();
  const int size = 3;
  std::vector<pid_t> children;
  for (int r = 1; r < size; ++r) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(forked_rank(name, r, size));
    children.push_back(pid);
  }
  EXPECT_EQ(forked_rank(name, 0, size), 0);
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  EXPECT_FALSE(shm_name_exists(name));
}

TEST(ShmProcesses, DeadChildIsUnavailableNotAHang) {
  const std::string name = unique_shm_name();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto c = make_shm_communicator(name, 1, 2, 10000);
    if (!c.is_ok() || !c.value()->barrier(10000).is_ok()) ::_exit(1);
    ::_exit(0);  // dies without leaving the group: no destructor runs
  }
  auto c = make_shm_communicator(name, 0, 2, 10000);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  ASSERT_TRUE(c.value()->barrier(10000).is_ok());
  // The child is a zombie until we reap it below, which kill(pid, 0) alone would not see.
  const auto start = Clock::now();
  std::vector<float> v(8192, 1.0f);
  const Status st = c.value()->all_reduce_sum(v.data(), v.size(), 20000);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.message();
  EXPECT_NE(st.message().find("has exited"), std::string::npos) << st.message();
  EXPECT_LT(ms_since(start), 1000);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace cohort::comm
