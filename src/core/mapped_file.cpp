#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace cohort {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// An anonymous read-write region of `bytes` starting on a 2 MiB boundary (so that every 2 MiB
// of it can be one huge page), with transparent huge pages asked for. *base and *len receive
// the whole mapping, for munmap.
Result<uint8_t*> map_huge_aligned(size_t bytes, void** base, size_t* len) {
  *len = bytes + kHugePage;
  void* p = ::mmap(nullptr, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return Status::io_error(std::string("cannot allocate memory for a copy: ") +
                            std::strerror(errno));
  }
  *base = p;
  const uintptr_t start = reinterpret_cast<uintptr_t>(p);
  auto* aligned = reinterpret_cast<uint8_t*>((start + kHugePage - 1) & ~(kHugePage - 1));
  ::madvise(aligned, bytes, MADV_HUGEPAGE);  // advice only: no THP just means small pages
  return aligned;
}

// Reads the whole of fd (size bytes) into dst.
Status read_all(int fd, uint8_t* dst, size_t size, const std::string& path) {
  size_t done = 0;
  while (done < size) {
    const size_t want = std::min<size_t>(size - done, size_t{64} << 20);
    const ssize_t n = ::pread(fd, dst + done, want, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Status::io_error("cannot read " + path + ": " +
                              (n < 0 ? std::strerror(errno) : "unexpected end of file"));
    }
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

}  // namespace

Result<MappedFile> MappedFile::open(const std::string& path, bool huge_pages) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::io_error("mmap: cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return Status::io_error("mmap: cannot stat " + path + ": " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::invalid_argument("mmap: " + path + " is not a regular file");
  }
  MappedFile f;
  f.path_ = path;
  f.size_ = static_cast<size_t>(st.st_size);
  if (f.size_ > 0 && huge_pages) {
    Result<uint8_t*> dst = map_huge_aligned(f.size_, &f.map_base_, &f.map_len_);
    Status copy = dst.is_ok() ? read_all(fd, *dst, f.size_, path) : dst.status();
    ::close(fd);
    if (!copy.is_ok()) return Status(copy.code(), "mmap: " + copy.message());
    ::mprotect(*dst, f.size_, PROT_READ);  // read-only from here on, as a file map is
    f.data_ = *dst;
    f.copied_ = true;
    return f;
  }
  if (f.size_ > 0) {
    void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      return Status::io_error("mmap: cannot map " + path + ": " + std::strerror(e));
    }
    f.data_ = static_cast<const uint8_t*>(p);
    f.map_base_ = p;
    f.map_len_ = f.size_;
  }
  ::close(fd);
  return f;
}

void MappedFile::release() {
  if (map_base_) ::munmap(map_base_, map_len_);
  map_base_ = nullptr;
  map_len_ = 0;
  data_ = nullptr;
  size_ = 0;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      path_(std::move(other.path_)),
      map_base_(std::exchange(other.map_base_, nullptr)),
      map_len_(std::exchange(other.map_len_, 0)),
      copied_(std::exchange(other.copied_, false)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    path_ = std::move(other.path_);
    map_base_ = std::exchange(other.map_base_, nullptr);
    map_len_ = std::exchange(other.map_len_, 0);
    copied_ = std::exchange(other.copied_, false);
  }
  return *this;
}

MappedFile::~MappedFile() { release(); }

}  // namespace cohort
