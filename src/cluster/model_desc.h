// The planner's view of a model file: sizes of its parts and the alignment its quant types
// impose on tensor-parallel splits.
#pragma once

#include "cluster/planner.h"
#include "format/gguf.h"

namespace cohort::cluster {

// kv_type: the KV cache's element type (F16 by default; Q8_0 stores 34 bytes per 32).
Result<ModelDesc> describe_model(const format::GgufFile& file, DType kv_type = DType::kF16);

}  // namespace cohort::cluster
