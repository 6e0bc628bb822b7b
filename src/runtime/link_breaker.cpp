#include "runtime/link_breaker.h"

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>

namespace cohort::runtime {
namespace {

// The local port of a connected stream socket, or -1 for anything else.
int connected_stream_port(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return -1;
  int type = 0;
  socklen_t len = sizeof(type);
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) return -1;
  sockaddr_storage peer{};
  len = sizeof(peer);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return -1;
  sockaddr_storage local{};
  len = sizeof(local);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0) return -1;
  if (local.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  if (local.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port);
  }
  return -1;
}

}  // namespace

int shutdown_connections_on_port(uint16_t local_port) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  int n = 0;
  while (const dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == ::dirfd(dir)) continue;
    if (connected_stream_port(static_cast<int>(fd)) != local_port) continue;
    if (::shutdown(static_cast<int>(fd), SHUT_RDWR) == 0) ++n;
  }
  ::closedir(dir);
  return n;
}

}  // namespace cohort::runtime
