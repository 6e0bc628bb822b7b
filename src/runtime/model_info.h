// The ModelInfo (runtime/engine.h) of a GGUF file served with a context of n_ctx tokens:
// architecture, parameter count, the most common weight type, size, a fingerprint digest
// (cluster/fingerprint.h, 16 hex digits) and the chat template source.
#pragma once

#include <cstdint>

#include "format/gguf.h"
#include "runtime/engine.h"

namespace cohort::runtime {

ModelInfo model_info_from_gguf(const format::GgufFile& file, int64_t n_ctx);

}  // namespace cohort::runtime
