// Helpers shared by the net tests: a connected loopback socket pair.
#pragma once

#include <gtest/gtest.h>

#include <utility>

#include "core/check.h"
#include "core/clock.h"
#include "net/socket.h"

namespace cohort::net::testing {

// *connector and *acceptor become the two ends of a connection over 127.0.0.1 on a free
// port. (Out-parameters rather than a pair: lambdas cannot capture structured bindings
// before clang 16.) Aborts the test binary on failure: the environment is broken then.
inline void connected_pair(Socket* connector, Socket* acceptor) {
  auto l = Listener::bind({"127.0.0.1", 0});
  COHORT_CHECK_MSG(l.is_ok(), l.status().message().c_str());
  auto a = Socket::connect({"127.0.0.1", l->port()}, 5000);
  COHORT_CHECK_MSG(a.is_ok(), a.status().message().c_str());
  auto b = l->accept(5000);
  COHORT_CHECK_MSG(b.is_ok(), b.status().message().c_str());
  *connector = std::move(a).value();
  *acceptor = std::move(b).value();
}

inline double elapsed_ms(int64_t start_ns) {
  return static_cast<double>(now_ns() - start_ns) / 1e6;
}

}  // namespace cohort::net::testing
