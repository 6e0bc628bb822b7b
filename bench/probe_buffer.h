// The buffers of the page-size probes (prefetch_after_jump.cpp, page_walk_cost.cpp).
#pragma once

#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstring>
#include <optional>
#include <utility>

#include "core/huge_page_buffer.h"

namespace cohort::bench {

// `gib` GiB, zeroed, in 2 MiB pages (huge) or in 4 KiB ones; nothing, with the benchmark
// marked skipped, where there is no memory for it. The 4 KiB case takes back HugePageBuffer's
// advice before any page is touched.
inline std::optional<HugePageBuffer> probe_buffer(benchmark::State& state, size_t gib, bool huge) {
  const size_t bytes = gib << 30;
  Result<HugePageBuffer> buffer = HugePageBuffer::allocate(bytes);
  if (!buffer.is_ok()) {
    state.SkipWithError("no memory for the buffer");
    return std::nullopt;
  }
  if (!huge) ::madvise(buffer->data(), bytes, MADV_NOHUGEPAGE);
  std::memset(buffer->data(), 0, bytes);
  return std::move(buffer).value();
}

}  // namespace cohort::bench
