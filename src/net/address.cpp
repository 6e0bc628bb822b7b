#include "net/address.h"

namespace cohort::net {
namespace {

Status bad(std::string_view s, const std::string& why) {
  return Status::invalid_argument("address: '" + std::string(s) + "' " + why);
}

bool valid_host_char(char c) {
  // Whitespace, control bytes and separators never belong in a host; reject them here
  // rather than letting a resolver interpret them.
  const auto u = static_cast<unsigned char>(c);
  return u > 0x20 && u != 0x7f && c != '/' && c != '[' && c != ']' && c != '@';
}

}  // namespace

std::string HostPort::to_string() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

Result<HostPort> parse_host_port(std::string_view s) {
  if (s.empty()) return bad(s, "is empty (expected host:port)");
  std::string_view host;
  std::string_view port;
  if (s.front() == '[') {
    const size_t close = s.find(']');
    if (close == std::string_view::npos) return bad(s, "has no closing ']'");
    host = s.substr(1, close - 1);
    const std::string_view rest = s.substr(close + 1);
    if (rest.empty() || rest.front() != ':') return bad(s, "has no port (expected [host]:port)");
    port = rest.substr(1);
    if (host.find(':') == std::string_view::npos) {
      return bad(s, "has brackets around a host that is not an IPv6 address");
    }
  } else {
    const size_t colon = s.rfind(':');
    if (colon == std::string_view::npos) return bad(s, "has no port (expected host:port)");
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return bad(s, "is ambiguous: write an IPv6 address in brackets, e.g. [::1]:5000");
    }
  }
  if (host.empty()) return bad(s, "has an empty host");
  for (char c : host) {
    if (!valid_host_char(c) && !(c == ':' && s.front() == '[')) {
      return bad(s, "has an invalid character in its host");
    }
  }
  if (port.empty()) return bad(s, "has an empty port");
  if (port.size() > 5) return bad(s, "has a port out of range (0..65535)");
  uint32_t value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return bad(s, "has a port that is not a number");
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value > 65535) return bad(s, "has a port out of range (0..65535)");
  return HostPort{std::string(host), static_cast<uint16_t>(value)};
}

}  // namespace cohort::net
