// The packed copies of a shard's weight matrices (kernels::TypeOps::Packed): made once at
// load, after slicing, in one block of huge-page memory, for every matrix whose type has a
// packed layout in the kernel table. The unpacked matrices stay bound (single rows, e.g.
// embeddings and latent-attention heads, are read from them).
#pragma once

#include <cstddef>

#include "core/huge_page_buffer.h"
#include "core/thread_pool.h"
#include "kernels/kernels.h"
#include "model/weights.h"

namespace cohort::model {

class PackedWeights {
 public:
  // Packs the matrices of *w in place (sets their packed forms) into memory this object
  // owns, which must outlive *w's use. Packs nothing, and says why in the log, when the
  // packed copies would not fit in the memory the system has available.
  // release_unpacked (for weights in a file mapping only): drop this process's pages of each
  // packed matrix's unpacked bytes once packed, so the copy does not double the resident
  // memory; a later read of a row (an embedding shared with the output) faults it back in.
  static Result<PackedWeights> pack(Weights* w, const kernels::KernelTable& kt, ThreadPool& pool,
                                    bool release_unpacked);

  size_t bytes() const { return buffer_.size(); }

 private:
  HugePageBuffer buffer_;
};

}  // namespace cohort::model
