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
    Result<HugePageBuffer> copy = HugePageBuffer::allocate(f.size_);
    Status filled =
        copy.is_ok()
            ? read_all(fd, copy->data(), f.size_, path)
            : Status::io_error("cannot copy " + path + " into memory: " + copy.status().message());
    ::close(fd);
    if (!filled.is_ok()) return Status(filled.code(), "mmap: " + filled.message());
    copy->make_read_only();  // as a file map is
    f.copy_ = std::move(copy).value();
    f.data_ = f.copy_.data();
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
  }
  ::close(fd);
  return f;
}

void MappedFile::release() {
  if (data_ && !copied()) ::munmap(const_cast<uint8_t*>(data_), size_);
  copy_ = HugePageBuffer();
  data_ = nullptr;
  size_ = 0;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      path_(std::move(other.path_)),
      copy_(std::move(other.copy_)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    path_ = std::move(other.path_);
    copy_ = std::move(other.copy_);
  }
  return *this;
}

MappedFile::~MappedFile() { release(); }

}  // namespace cohort
