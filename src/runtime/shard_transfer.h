// Weight shipping on a control connection: the head streams a shard file (built on the fly
// by model::shard_writer from its own mapping, never staged on disk) to a worker, which
// stores it in its ShardCache. Chunks of 1 MiB carry their offset and an XXH3-64 of their
// bytes, so damage is caught at the chunk it hit; the end carries the XXH3-128 of the whole
// file, checked before the file is published. Both sides log progress.
#pragma once

#include <string>

#include "core/status.h"
#include "format/gguf_writer.h"
#include "net/socket.h"
#include "runtime/shard_cache.h"

namespace cohort::runtime {

inline constexpr size_t kShardChunkBytes = 1u << 20;

// Head side, after the worker answered kMsgShardWanted with key. peer names the worker in
// logs. Returns once the last frame is written (the worker then answers kMsgSetupDone).
Status send_shard(net::Socket& s, const format::GgufWriter& shard, const std::string& key,
                  const std::string& peer, int64_t timeout_ms);

// Worker side, after sending kMsgShardWanted for key: receives Begin, Chunk..., End and
// returns the cached file's path. On a local failure (disk full, write error) it keeps
// reading to the end, so the connection stays in step, and returns the error.
Result<std::string> receive_shard(net::Socket& s, const ShardCache& cache, const std::string& key,
                                  int64_t timeout_ms);

}  // namespace cohort::runtime
