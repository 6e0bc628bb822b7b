#include "cluster/fingerprint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <vector>

namespace cohort::cluster {
namespace {

constexpr uint64_t kSamples = 64, kSampleBytes = 4096;

// Reads with pread rather than through the mapping: touching 64 scattered pages of a mapped
// file makes the kernel map whole neighbourhoods of them (tens of MiB resident), which would
// count against a worker that must hold only its shard.
bool hash_from_file(const format::GgufFile& file, uint64_t* out) {
  const int fd = ::open(file.name().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  const uint64_t size = file.file_bytes(), header = file.data_offset();
  bool ok = ::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) == size;
  std::vector<uint8_t> buf(std::max<uint64_t>(header, kSampleBytes));
  uint64_t h = 0;
  if (ok) ok = ::pread(fd, buf.data(), header, 0) == static_cast<ssize_t>(header);
  if (ok) h = XXH3_64bits_withSeed(buf.data(), header, size);
  const uint64_t data = size - header;
  for (uint64_t i = 0; ok && i < kSamples && data > 0; ++i) {
    const uint64_t at = header + data / kSamples * i;
    const uint64_t n = std::min(kSampleBytes, size - at);
    ok = ::pread(fd, buf.data(), n, static_cast<off_t>(at)) == static_cast<ssize_t>(n);
    if (ok) h = XXH3_64bits_withSeed(buf.data(), n, h);
  }
  ::close(fd);
  if (ok) *out = h;
  return ok;
}

}  // namespace

uint64_t model_fingerprint(const format::GgufFile& file) {
  uint64_t h = 0;
  if (hash_from_file(file, &h)) return h;
  // In-memory images (llama2.c conversions): the same bytes, hashed in place.
  const uint8_t* p = file.raw_bytes();
  const uint64_t size = file.file_bytes(), header = file.data_offset();
  h = XXH3_64bits_withSeed(p, header, size);
  const uint64_t data = size - header;
  for (uint64_t i = 0; i < kSamples && data > 0; ++i) {
    const uint64_t at = header + data / kSamples * i;
    h = XXH3_64bits_withSeed(p + at, std::min(kSampleBytes, size - at), h);
  }
  return h;
}

}  // namespace cohort::cluster
