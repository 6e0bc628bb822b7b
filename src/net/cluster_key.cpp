#include "net/cluster_key.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "core/log.h"

namespace cohort::net {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// The parse error without the text, so callers can add their own context.
std::string hex_error(std::string_view hex) {
  if (hex.size() != 2 * kClusterKeyBytes) {
    return "expected " + std::to_string(2 * kClusterKeyBytes) + " hex characters, got " +
           std::to_string(hex.size());
  }
  for (size_t i = 0; i < hex.size(); ++i) {
    if (hex_value(hex[i]) < 0) return "non-hex character at position " + std::to_string(i);
  }
  return "";
}

}  // namespace

void ensure_sodium() {
  static std::once_flag once;
  std::call_once(once, [] { COHORT_CHECK_MSG(sodium_init() >= 0, "libsodium failed to start"); });
}

ClusterKey generate_cluster_key() {
  ensure_sodium();
  ClusterKey key;
  randombytes_buf(key.bytes.data(), key.bytes.size());
  return key;
}

std::string key_to_hex(const ClusterKey& key) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * kClusterKeyBytes);
  for (uint8_t b : key.bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

Result<ClusterKey> key_from_hex(std::string_view hex) {
  const std::string why = hex_error(hex);
  if (!why.empty()) return Status::invalid_argument("key: " + why);
  ClusterKey key;
  for (size_t i = 0; i < kClusterKeyBytes; ++i) {
    key.bytes[i] = static_cast<uint8_t>(hex_value(hex[2 * i]) << 4 | hex_value(hex[2 * i + 1]));
  }
  return key;
}

Result<ClusterKey> load_key_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string m = "key: cannot open " + path + ": " + std::strerror(err);
    return err == ENOENT ? Status::not_found(m) : Status::io_error(m);
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    COHORT_LOG_WARN("key: %s is accessible by other users; chmod 600 it", path.c_str());
  }
  // A key file is 64 characters plus whitespace; anything much longer is the wrong file.
  char buf[512];
  size_t n = 0;
  for (;;) {
    const ssize_t r = ::read(fd, buf + n, sizeof(buf) - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const int err = errno;
      ::close(fd);
      return Status::io_error("key: cannot read " + path + ": " + std::strerror(err));
    }
    if (r == 0) break;
    n += static_cast<size_t>(r);
    if (n == sizeof(buf)) {
      ::close(fd);
      sodium_memzero(buf, sizeof(buf));
      return Status::invalid_argument("key: " + path + " is too large to be a key file");
    }
  }
  ::close(fd);
  std::string_view text(buf, n);
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  const std::string why = hex_error(text);
  Result<ClusterKey> key =
      why.empty() ? key_from_hex(text)
                  : Result<ClusterKey>(Status::invalid_argument("key: " + path + ": " + why));
  sodium_memzero(buf, sizeof(buf));
  return key;
}

Status save_key_file(const std::string& path, const ClusterKey& key) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::io_error("key: cannot create " + path + ": " + std::strerror(errno));
  }
  std::string text = key_to_hex(key) + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      const int err = errno;
      ::close(fd);
      sodium_memzero(text.data(), text.size());
      return Status::io_error("key: cannot write " + path + ": " + std::strerror(err));
    }
    done += static_cast<size_t>(w);
  }
  sodium_memzero(text.data(), text.size());
  if (::close(fd) != 0) {
    return Status::io_error("key: cannot write " + path + ": " + std::strerror(errno));
  }
  return Status::ok();
}

}  // namespace cohort::net
