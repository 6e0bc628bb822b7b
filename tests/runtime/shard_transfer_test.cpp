// Weight shipping over a real loopback connection: a shard streamed by send_shard arrives
// byte-identical in the receiver's cache; a chunk that fails its checksum, a chunk out of
// order, or a wrong whole-file hash is refused and nothing is published; a cached file that
// was damaged on disk is found out and removed.
#include <gtest/gtest.h>

#include <xxhash.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "cluster/protocol.h"
#include "format/gguf_writer.h"
#include "net/frame.h"
#include "net/net_test_util.h"
#include "net/wire.h"
#include "runtime/shard_cache.h"
#include "runtime/shard_transfer.h"
#include "support/temp_dir.h"

namespace cohort::runtime {
namespace {

using net::testing::connected_pair;

// A 3.5 MiB file in three tensors, so it spans several chunks (1 MiB each).
format::GgufWriter sample_file() {
  format::GgufWriter w;
  w.set_string("general.name", "shipping test");
  for (int t = 0; t < 3; ++t) {
    std::vector<int64_t> shape = {1024, 300 + 50 * t};
    w.add_tensor_chunked("t" + std::to_string(t), DType::kF32, shape,
                         [t](uint8_t* dst, uint64_t off, uint64_t n) {
                           for (uint64_t i = 0; i < n; ++i)
                             dst[i] = static_cast<uint8_t>((off + i) * 7 + t);
                         });
  }
  return w;
}

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

TEST(ShardTransfer, ArrivesIntactAndIsCached) {
  testing::TempDir dir;
  const ShardCache cache(dir.file("cache/nested"));
  const format::GgufWriter w = sample_file();
  net::Socket head, worker;
  connected_pair(&head, &worker);
  Status sent;
  std::thread t([&] { sent = send_shard(head, w, "00000000000000aa", "test", 5000); });
  auto got = receive_shard(worker, cache, "00000000000000aa", 5000);
  t.join();
  ASSERT_TRUE(sent.is_ok()) << sent.message();
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  EXPECT_EQ(read_all(*got), w.write_memory());
  auto found = cache.find("00000000000000aa");
  ASSERT_TRUE(found.is_ok()) << found.status().message();
  EXPECT_EQ(*found, *got);
  EXPECT_EQ(cache.find("00000000000000bb").status().code(), StatusCode::kNotFound);

  // Damage on disk: found out by the hash, the files removed.
  {
    std::fstream f(*got, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(1 << 20);
    f.put('\x42');
  }
  auto damaged = cache.find("00000000000000aa");
  EXPECT_EQ(damaged.status().code(), StatusCode::kCorrupt) << damaged.status().message();
  EXPECT_FALSE(std::filesystem::exists(*got));
  EXPECT_EQ(cache.find("00000000000000aa").status().code(), StatusCode::kNotFound);
}

// A hand-made head that sends what it is told, to see the receiver refuse it.
struct BadHead {
  net::Socket s;
  void begin(uint64_t total) {
    net::WireWriter b;
    b.str("00000000000000cc").u64(total);
    ASSERT_TRUE(net::write_frame(s, cluster::kMsgShardBegin, b.data().data(), b.data().size(), 1000)
                    .is_ok());
  }
  void chunk(uint64_t offset, const std::vector<uint8_t>& data, bool good_hash = true) {
    net::WireWriter c;
    c.u64(offset).u64(XXH3_64bits(data.data(), data.size()) + (good_hash ? 0 : 1));
    std::vector<uint8_t> p = c.data();
    p.insert(p.end(), data.begin(), data.end());
    ASSERT_TRUE(net::write_frame(s, cluster::kMsgShardChunk, p.data(), p.size(), 1000).is_ok());
  }
  void end(uint64_t lo, uint64_t hi) {
    net::WireWriter e;
    e.u64(lo).u64(hi);
    ASSERT_TRUE(
        net::write_frame(s, cluster::kMsgShardEnd, e.data().data(), e.data().size(), 1000).is_ok());
  }
};

TEST(ShardTransfer, DamagedOrDisorderedStreamsAreRefusedAndNothingIsKept) {
  testing::TempDir dir;
  const ShardCache cache(dir.file("cache"));
  const std::vector<uint8_t> data(1000, 7);
  ContentHasher h;
  h.update(data.data(), data.size());
  const ContentHash right = h.digest();

  struct Case {
    const char* name;
    std::function<void(BadHead&)> send;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"bad chunk checksum",
       [&](BadHead& b) {
         b.begin(1000);
         b.chunk(0, data, false);
       },
       "does not match its checksum"},
      {"chunk out of order",
       [&](BadHead& b) {
         b.begin(2000);
         b.chunk(1000, data);
       },
       "expected 0"},
      {"more than announced",
       [&](BadHead& b) {
         b.begin(500);
         b.chunk(0, data);
         b.end(right.lo, right.hi);
       },
       "more bytes than announced"},
      {"wrong file hash",
       [&](BadHead& b) {
         b.begin(1000);
         b.chunk(0, data);
         b.end(right.lo ^ 1, right.hi);
       },
       "content hash"},
      {"short stream",
       [&](BadHead& b) {
         b.begin(2000);
         b.chunk(0, data);
         b.end(right.lo, right.hi);
       },
       "got 1000 of 2000"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    BadHead head;
    net::Socket worker;
    connected_pair(&head.s, &worker);
    c.send(head);
    auto got = receive_shard(worker, cache, "00000000000000cc", 2000);
    ASSERT_FALSE(got.is_ok());
    EXPECT_NE(got.status().message().find(c.expect), std::string::npos) << got.status().message();
    EXPECT_FALSE(std::filesystem::exists(cache.path("00000000000000cc")));
    EXPECT_FALSE(std::filesystem::exists(cache.path("00000000000000cc") + ".partial"));
  }
}

}  // namespace
}  // namespace cohort::runtime
