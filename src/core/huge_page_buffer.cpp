#include "core/huge_page_buffer.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace cohort {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

Result<HugePageBuffer> HugePageBuffer::allocate(size_t bytes) {
  HugePageBuffer b;
  // One huge page more than asked, so that an aligned start always fits.
  b.map_len_ = bytes + kHugePage;
  void* p = ::mmap(nullptr, b.map_len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return Status::io_error("cannot allocate " + std::to_string(bytes) +
                            " bytes: " + std::strerror(errno));
  }
  b.map_base_ = p;
  const uintptr_t start = reinterpret_cast<uintptr_t>(p);
  b.data_ = reinterpret_cast<uint8_t*>((start + kHugePage - 1) & ~(kHugePage - 1));
  b.size_ = bytes;
  ::madvise(b.data_, bytes, MADV_HUGEPAGE);  // advice only
  return b;
}

void HugePageBuffer::make_read_only() {
  if (data_) ::mprotect(data_, size_, PROT_READ);
}

void HugePageBuffer::release() {
  if (map_base_) ::munmap(map_base_, map_len_);
  map_base_ = nullptr;
  map_len_ = 0;
  data_ = nullptr;
  size_ = 0;
}

HugePageBuffer::HugePageBuffer(HugePageBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      map_base_(std::exchange(other.map_base_, nullptr)),
      map_len_(std::exchange(other.map_len_, 0)) {}

HugePageBuffer& HugePageBuffer::operator=(HugePageBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    map_base_ = std::exchange(other.map_base_, nullptr);
    map_len_ = std::exchange(other.map_len_, 0);
  }
  return *this;
}

HugePageBuffer::~HugePageBuffer() { release(); }

}  // namespace cohort
