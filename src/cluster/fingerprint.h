// A cheap identity for a model file: xxHash3 of its header region (metadata and tensor
// directory, which name every tensor with its type, shape and offset), 64 samples of 4 KiB
// spread over the data, and the size. Meant to tell "the same file" from "a different
// file" on two nodes without reading gigabytes; the weight-shipping path hashes every byte
// it sends.
#pragma once

#include <cstdint>

#include "format/gguf.h"

namespace cohort::cluster {

uint64_t model_fingerprint(const format::GgufFile& file);

}  // namespace cohort::cluster
