#include "runtime/shard_transfer.h"

#include <xxhash.h>

#include <optional>
#include <vector>

#include "cluster/protocol.h"
#include "core/progress.h"
#include "net/frame.h"
#include "net/wire.h"

namespace cohort::runtime {
namespace {

constexpr size_t kChunkHeader = 16;  // u64 offset, u64 hash

}  // namespace

Status send_shard(net::Socket& s, const format::GgufWriter& shard, const std::string& key,
                  const std::string& peer, int64_t timeout_ms) {
  const uint64_t total = shard.total_bytes();
  net::WireWriter begin;
  begin.str(key).u64(total);
  COHORT_RETURN_IF_ERROR(net::write_frame(s, cluster::kMsgShardBegin, begin.data().data(),
                                          begin.data().size(), timeout_ms));
  ProgressMeter progress("shipping shard " + key + " to " + peer, total);
  ContentHasher whole;
  std::vector<uint8_t> frame;
  frame.reserve(kChunkHeader + kShardChunkBytes);
  uint64_t offset = 0, sent = 0;
  auto flush = [&]() -> Status {
    if (frame.size() <= kChunkHeader) return Status::ok();
    const uint8_t* data = frame.data() + kChunkHeader;
    const size_t n = frame.size() - kChunkHeader;
    const uint64_t h = XXH3_64bits(data, n);
    for (int k = 0; k < 8; ++k) {
      frame[k] = static_cast<uint8_t>(offset >> (8 * k));
      frame[8 + k] = static_cast<uint8_t>(h >> (8 * k));
    }
    COHORT_RETURN_IF_ERROR(
        net::write_frame(s, cluster::kMsgShardChunk, frame.data(), frame.size(), timeout_ms));
    offset += n;
    frame.resize(kChunkHeader);
    progress.update(offset);
    return Status::ok();
  };
  frame.resize(kChunkHeader);
  Status st = shard.write_stream([&](const uint8_t* p, size_t n) -> Status {
    whole.update(p, n);
    sent += n;
    while (n > 0) {
      const size_t take = std::min(n, kShardChunkBytes - (frame.size() - kChunkHeader));
      frame.insert(frame.end(), p, p + take);
      p += take;
      n -= take;
      if (frame.size() - kChunkHeader == kShardChunkBytes) COHORT_RETURN_IF_ERROR(flush());
    }
    return Status::ok();
  });
  if (st.is_ok()) st = flush();
  if (!st.is_ok()) return Status::unavailable("shipping to " + peer + ": " + st.message());
  if (sent != total) {
    return Status::internal("shard " + key + ": wrote " + std::to_string(sent) + " of " +
                            std::to_string(total) + " announced bytes");
  }
  const ContentHash h = whole.digest();
  net::WireWriter end;
  end.u64(h.lo).u64(h.hi);
  COHORT_RETURN_IF_ERROR(
      net::write_frame(s, cluster::kMsgShardEnd, end.data().data(), end.data().size(), timeout_ms));
  progress.finish();
  return Status::ok();
}

Result<std::string> receive_shard(net::Socket& s, const ShardCache& cache, const std::string& key,
                                  int64_t timeout_ms) {
  COHORT_ASSIGN_OR_RETURN(net::Frame f, net::read_frame(s, 4096, timeout_ms));
  if (f.type != cluster::kMsgShardBegin) {
    return Status::corrupt("shard transfer: expected the start of shard " + key + ", got message " +
                           std::to_string(f.type));
  }
  net::WireReader r(f.payload);
  std::string got_key;
  uint64_t total = 0;
  COHORT_RETURN_IF_ERROR(r.str(&got_key, 64));
  COHORT_RETURN_IF_ERROR(r.u64(&total));
  COHORT_RETURN_IF_ERROR(r.expect_end());
  if (got_key != key) {
    return Status::corrupt("shard transfer: asked for " + key + ", the head sent " + got_key);
  }
  // A local failure (no space, write error) is remembered and the stream drained.
  Status local = Status::ok();
  std::optional<ShardCache::Incoming> in;
  if (auto b = cache.begin(key, total); b.is_ok()) {
    in.emplace(std::move(b).value());
  } else {
    local = b.status();
  }
  ProgressMeter progress("receiving shard " + key, total);
  uint64_t offset = 0;
  for (;;) {
    COHORT_ASSIGN_OR_RETURN(f, net::read_frame(s, kChunkHeader + kShardChunkBytes, timeout_ms));
    if (f.type == cluster::kMsgShardEnd) break;
    if (f.type != cluster::kMsgShardChunk || f.payload.size() <= kChunkHeader) {
      return Status::corrupt("shard transfer: unexpected message " + std::to_string(f.type));
    }
    net::WireReader c(f.payload.data(), kChunkHeader);
    uint64_t at = 0, h = 0;
    COHORT_RETURN_IF_ERROR(c.u64(&at));
    COHORT_RETURN_IF_ERROR(c.u64(&h));
    const uint8_t* data = f.payload.data() + kChunkHeader;
    const size_t n = f.payload.size() - kChunkHeader;
    if (at != offset) {
      return Status::corrupt("shard transfer: chunk at " + std::to_string(at) + ", expected " +
                             std::to_string(offset));
    }
    if (XXH3_64bits(data, n) != h) {
      return Status::corrupt("shard transfer: chunk at " + std::to_string(at) +
                             " does not match its checksum");
    }
    offset += n;
    if (local.is_ok()) local = in->append(data, n);
    progress.update(offset);
  }
  net::WireReader e(f.payload);
  ContentHash expected;
  COHORT_RETURN_IF_ERROR(e.u64(&expected.lo));
  COHORT_RETURN_IF_ERROR(e.u64(&expected.hi));
  COHORT_RETURN_IF_ERROR(e.expect_end());
  COHORT_RETURN_IF_ERROR(local);
  COHORT_ASSIGN_OR_RETURN(std::string path, in->finish(expected));
  progress.finish();
  return path;
}

}  // namespace cohort::runtime
