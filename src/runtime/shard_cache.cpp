#include "runtime/shard_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace cohort::runtime {
namespace {

constexpr size_t kReadBlock = 4u << 20;

std::string errno_text() { return std::strerror(errno); }

Status write_all(int fd, const void* p, size_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, b, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status::io_error(errno_text());
    }
    b += w;
    n -= static_cast<size_t>(w);
  }
  return Status::ok();
}

Result<std::string> read_small(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::not_found(path + ": " + errno_text());
  char buf[128];
  const size_t n = std::fread(buf, 1, sizeof(buf), f);
  std::fclose(f);
  return std::string(buf, n);
}

}  // namespace

std::string ContentHash::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(hi),
                static_cast<unsigned long long>(lo));
  return buf;
}

ContentHasher::ContentHasher() : state_(XXH3_createState()) {
  XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_));
}
ContentHasher::~ContentHasher() {
  if (state_) XXH3_freeState(static_cast<XXH3_state_t*>(state_));
}
void ContentHasher::update(const void* p, size_t n) {
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), p, n);
}
ContentHash ContentHasher::digest() const {
  const XXH128_hash_t h = XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_));
  return ContentHash{h.low64, h.high64};
}

Result<ContentHash> hash_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::not_found(path + ": " + errno_text());
  ContentHasher h;
  std::vector<uint8_t> buf(kReadBlock);
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string e = errno_text();
      ::close(fd);
      return Status::io_error(path + ": " + e);
    }
    if (n == 0) break;
    h.update(buf.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  return h.digest();
}

std::string ShardCache::default_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    return std::string(x) + "/cohort/shards";
  }
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/cohort/shards";
  return "/tmp/cohort-shards";
}

Status ShardCache::ensure_dir() const {
  // mkdir -p, one component at a time.
  for (size_t at = 1; at <= dir_.size(); ++at) {
    if (at != dir_.size() && dir_[at] != '/') continue;
    const std::string part = dir_.substr(0, at);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::io_error("shard cache: cannot create " + part + ": " + errno_text());
    }
  }
  return Status::ok();
}

Result<std::string> ShardCache::find(const std::string& key) const {
  const std::string file = path(key), sidecar = dir_ + "/" + key + ".xxh128";
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return Status::not_found("shard " + key + " not cached");
  auto recorded = read_small(sidecar);
  auto actual = hash_file(file);
  if (recorded.is_ok() && actual.is_ok() && *recorded == actual->hex()) return file;
  std::remove(file.c_str());
  std::remove(sidecar.c_str());
  return Status::corrupt("shard cache: " + file + " no longer matches its hash; removed");
}

Result<ShardCache::Incoming> ShardCache::begin(const std::string& key, uint64_t total) const {
  COHORT_RETURN_IF_ERROR(ensure_dir());
  struct statvfs vfs {};
  if (::statvfs(dir_.c_str(), &vfs) == 0) {
    const uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    if (free_bytes < total) {
      return Status::unavailable("shard cache: " + dir_ + " has " +
                                 std::to_string(free_bytes >> 20) + " MiB free, the shard needs " +
                                 std::to_string(total >> 20) + " MiB");
    }
  }
  const std::string partial = path(key) + ".partial";
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status::io_error("shard cache: cannot create " + partial + ": " + errno_text());
  return Incoming(*this, key, total, fd);
}

ShardCache::Incoming::Incoming(const ShardCache& c, std::string key, uint64_t total, int fd)
    : cache_(&c), key_(std::move(key)), total_(total), fd_(fd) {}

ShardCache::Incoming::Incoming(Incoming&& o) noexcept
    : cache_(o.cache_),
      key_(std::move(o.key_)),
      total_(o.total_),
      received_(o.received_),
      fd_(o.fd_),
      hasher_(std::move(o.hasher_)) {
  o.fd_ = -1;
}

ShardCache::Incoming::~Incoming() {
  if (fd_ >= 0) {
    ::close(fd_);
    std::remove((cache_->path(key_) + ".partial").c_str());  // incomplete: never kept
  }
}

Status ShardCache::Incoming::append(const void* p, size_t n) {
  if (fd_ < 0) return Status::internal("shard cache: append after finish");
  if (n > total_ - received_) {
    return Status::corrupt("shard " + key_ + ": more bytes than announced (" +
                           std::to_string(total_) + ")");
  }
  Status s = write_all(fd_, p, n);
  if (!s.is_ok()) return Status::io_error("shard cache: writing " + key_ + ": " + s.message());
  hasher_.update(p, n);
  received_ += n;
  return Status::ok();
}

Result<std::string> ShardCache::Incoming::finish(const ContentHash& expected) {
  if (received_ != total_) {
    return Status::corrupt("shard " + key_ + ": got " + std::to_string(received_) + " of " +
                           std::to_string(total_) + " bytes");
  }
  const ContentHash got = hasher_.digest();
  if (!(got == expected)) {
    return Status::corrupt("shard " + key_ + ": content hash " + got.hex() + " != sent " +
                           expected.hex());
  }
  if (::close(fd_) != 0) {
    fd_ = -1;
    return Status::io_error("shard cache: closing " + key_ + ": " + errno_text());
  }
  fd_ = -1;
  const std::string file = cache_->path(key_), partial = file + ".partial";
  const std::string sidecar = cache_->dir() + "/" + key_ + ".xxh128";
  if (std::rename(partial.c_str(), file.c_str()) != 0) {
    return Status::io_error("shard cache: cannot rename " + partial + ": " + errno_text());
  }
  const std::string tmp = sidecar + ".tmp", hex = got.hex();
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  bool ok = f && std::fwrite(hex.data(), 1, hex.size(), f) == hex.size();
  if (f && std::fclose(f) != 0) ok = false;
  if (!ok || std::rename(tmp.c_str(), sidecar.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::io_error("shard cache: cannot record the hash of " + key_);
  }
  return file;
}

}  // namespace cohort::runtime
