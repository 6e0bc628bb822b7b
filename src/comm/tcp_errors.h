#pragma once

#include <string>
#include <string_view>

namespace cohort::comm {

// "tcp: peer x closed the connection" -> "peer x closed the connection", so that a message
// that already carries our own prefix does not repeat it.
inline std::string_view strip_tcp_prefix(const std::string& m) {
  std::string_view v(m);
  if (v.substr(0, 5) == "tcp: ") v.remove_prefix(5);
  return v;
}

}  // namespace cohort::comm
