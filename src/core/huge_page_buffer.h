// Anonymous memory for large data read in long streams (model weights, bandwidth probes):
// it starts on a 2 MiB boundary, so that every 2 MiB of it can be one transparent huge page,
// and huge pages are asked for (madvise: advice only; with THP off the memory is simply in
// 4 KiB pages). Fewer TLB misses: a stream over 4 KiB pages misses the TLB every 4 KiB.
// Move-only; unmapped on destruction.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace cohort {

class HugePageBuffer {
 public:
  // bytes > 0. kIoError when the system gives no memory.
  static Result<HugePageBuffer> allocate(size_t bytes);

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // No more writes from here on (a write then faults).
  void make_read_only();

  HugePageBuffer() = default;
  HugePageBuffer(HugePageBuffer&& other) noexcept;
  HugePageBuffer& operator=(HugePageBuffer&& other) noexcept;
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;
  ~HugePageBuffer();

 private:
  void release();

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* map_base_ = nullptr;  // the whole mapping, for munmap: it starts before data_
  size_t map_len_ = 0;
};

}  // namespace cohort
