// The planner's view of a model file: sizes of its parts and the alignment its quant types
// impose on tensor-parallel splits.
#pragma once

#include "cluster/planner.h"
#include "format/gguf.h"

namespace cohort::cluster {

// kv_type_bytes: bytes per cached element (2 for the default F16 cache).
Result<ModelDesc> describe_model(const format::GgufFile& file, int kv_type_bytes = 2);

}  // namespace cohort::cluster
