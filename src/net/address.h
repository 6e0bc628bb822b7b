// Host and port of a TCP or UDP endpoint, and the one parser of "host:port" text that
// flags, config files and discovery use.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace cohort::net {

// A host (IPv4 literal, IPv6 literal without brackets, or a name) and a port.
// Plain value type; thread-compatible.
struct HostPort {
  std::string host;
  uint16_t port = 0;

  // "1.2.3.4:5000", "[::1]:5000" (IPv6 literals in brackets), "name:5000".
  std::string to_string() const;
  bool operator==(const HostPort&) const = default;
};

// Parses "127.0.0.1:5000", "[::1]:5000" or "host:5000". The port is required and must be
// 0..65535 (0 means "any free port" to Listener::bind). An IPv6 literal must be bracketed.
// Errors are kInvalidArgument "address: ...".
Result<HostPort> parse_host_port(std::string_view s);

}  // namespace cohort::net
