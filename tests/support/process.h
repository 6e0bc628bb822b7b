// Child processes and loopback ports for the multi-process tests: the same helpers the
// commands use (core/child_process.h), under the names the tests were written with.
#pragma once

#include "core/child_process.h"

namespace cohort::testing {

using ChildProcess = cohort::ChildProcess;

inline int free_port() { return free_loopback_port(); }
inline bool wait_for_port(int port, int timeout_ms) {
  return wait_for_loopback_port(port, timeout_ms);
}

}  // namespace cohort::testing
