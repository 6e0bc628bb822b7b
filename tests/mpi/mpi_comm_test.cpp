// The mpi transport under mpirun (-np 2 and -np 3): every rank runs these tests in the same
// order, as collectives require. Results must match what the other transports give:
// all-reduce sums bit-identical on every rank (both small-vector paths and MPI_Allreduce
// for large ones), all-gather and broadcast exact, point-to-point order kept, and a peer
// that never answers gives kTimeout within its deadline instead of a hang.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "comm/mpi/mpi_communicator.h"
#include "core/clock.h"

namespace cohort::comm::mpi {
namespace {

std::unique_ptr<Communicator> world(const char* small_path = "") {
  Options o;
  o.small_path = small_path;
  auto w = make_world(o);
  EXPECT_TRUE(w.is_ok()) << w.status().message();
  return w.is_ok() ? std::move(w).value() : nullptr;
}

float value(int rank, size_t i) { return std::sin(0.37f * static_cast<float>(i) + rank) * 3; }

// Sums of values of every rank must agree exactly across ranks (gathered to check).
void check_all_reduce(Communicator& c, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = value(c.rank(), i);
  ASSERT_TRUE(c.all_reduce_sum(v.data(), n, 20000).is_ok());
  for (size_t i = 0; i < n; i += std::max<size_t>(1, n / 97)) {
    double expect = 0;
    for (int r = 0; r < c.size(); ++r) expect += value(r, i);
    ASSERT_NEAR(v[i], expect, 1e-4) << "element " << i;
  }
  std::vector<float> all(n * static_cast<size_t>(c.size()));
  ASSERT_TRUE(c.all_gather(v.data(), all.data(), n * sizeof(float), 20000).is_ok());
  for (int r = 1; r < c.size(); ++r) {
    ASSERT_EQ(std::memcmp(all.data(), all.data() + n * static_cast<size_t>(r), n * sizeof(float)),
              0)
        << "rank " << r << " holds a different sum";
  }
}

TEST(Mpi, AllReduceBothSmallPathsAndLargeVectors) {
  for (const char* path : {"mpi", "p2p", ""}) {
    SCOPED_TRACE(path);
    auto c = world(path);
    ASSERT_TRUE(c);
    if (c->rank() == 0) std::printf("[ mpi ] %s\n", describe_small_path(*c).c_str());
    for (size_t n : {1u, 7u, 2048u, 16384u, 300001u}) check_all_reduce(*c, n);
  }
}

TEST(Mpi, PointToPointKeepsOrderAndBroadcastAndBarrierWork) {
  auto c = world();
  ASSERT_TRUE(c);
  const int n = c->size(), me = c->rank();
  // A ring: everyone sends three messages of growing size to the next rank.
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  for (size_t bytes : {1u, 100u, 1u << 20}) {
    std::vector<uint8_t> out(bytes, static_cast<uint8_t>(me + bytes)), in(bytes);
    if (me % 2 == 0) {
      ASSERT_TRUE(c->send(next, out.data(), bytes, 10000).is_ok());
      ASSERT_TRUE(c->recv(prev, in.data(), bytes, 10000).is_ok());
    } else {
      ASSERT_TRUE(c->recv(prev, in.data(), bytes, 10000).is_ok());
      ASSERT_TRUE(c->send(next, out.data(), bytes, 10000).is_ok());
    }
    EXPECT_EQ(in[0], static_cast<uint8_t>(prev + bytes));
    EXPECT_EQ(in[bytes - 1], static_cast<uint8_t>(prev + bytes));
  }
  for (int root = 0; root < n; ++root) {
    std::vector<int32_t> b(1000, me == root ? 40 + root : -1);
    ASSERT_TRUE(c->broadcast(b.data(), b.size() * 4, root, 10000).is_ok());
    EXPECT_EQ(b[999], 40 + root);
  }
  EXPECT_TRUE(c->barrier(10000).is_ok());
  EXPECT_FALSE(c->send(me, nullptr, 0, 100).is_ok());  // no messages to oneself
  EXPECT_FALSE(c->send(n, nullptr, 0, 100).is_ok());
}

TEST(Mpi, SubgroupsBySplit) {
  auto c = world();
  ASSERT_TRUE(c);
  auto g = split(*c, c->rank() % 2);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  EXPECT_EQ((*g)->size(), (c->size() + 1 - c->rank() % 2) / 2);
  check_all_reduce(**g, 5000);
}

// Last: it leaves the group unusable by design.
TEST(Mpi, SilentPeerTimesOutInsteadOfHanging) {
  auto c = world("p2p");
  ASSERT_TRUE(c);
  if (c->rank() == 0) {
    int x = 0;
    const int64_t t0 = now_ns();
    Status s = c->recv(1, &x, sizeof(x), 300);
    const double ms = (now_ns() - t0) / 1e6;
    EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.message();
    EXPECT_LT(ms, 3000);
    EXPECT_EQ(c->barrier(100).code(), StatusCode::kUnavailable);  // refused after a timeout
  }
  // Rank 0's half-finished receive must not block the others' finalisation; the world
  // barrier below uses a fresh communicator.
  auto fresh = world("mpi");
  ASSERT_TRUE(fresh);
  EXPECT_TRUE(fresh->barrier(10000).is_ok());
}

}  // namespace
}  // namespace cohort::comm::mpi

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!cohort::comm::mpi::init().is_ok()) return 1;
  // Only rank 0 prints gtest's report; every rank's failures still fail the run.
  if (cohort::comm::mpi::world_rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
