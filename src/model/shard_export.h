// Cutting one rank's shard out of a whole model file: a GGUF of its own holding only the
// tensors that shard reads, already sliced (rows of Q/K/V/gate/up, block-aligned columns of
// attention output and FFN down, elements of biases), plus all of the source's metadata and
// the ShardSpec it was cut for (cohort.shard.*). Weights::bind accepts such a file for that
// shard only. This is what a head ships to a worker that does not have the model: the worker
// then holds (on disk and in memory) just its part.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "format/gguf.h"
#include "format/gguf_writer.h"
#include "model/shard_spec.h"

namespace cohort::model {

// Bumped when the layout of shard files changes, so cached shards of the old layout are
// never mistaken for new ones.
inline constexpr uint32_t kShardFormatVersion = 1;

// A writer that streams the shard file, reading tensor bytes from file's mapping as it goes
// (file must outlive the writer). Errors: the shard does not fit the model.
Result<format::GgufWriter> shard_writer(const format::GgufFile& file, const ShardSpec& shard);

// A name for the shard of a given source model (fingerprint and size) that is stable across
// nodes and runs: 16 hex digits. Two different shards or sources give different keys.
std::string shard_key(uint64_t model_fingerprint, uint64_t model_bytes, const ShardSpec& shard);

}  // namespace cohort::model
