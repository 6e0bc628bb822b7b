// Monotonic time in the units callers want, for timings printed to users and benchmarks.
#pragma once

#include <chrono>
#include <cstdint>

namespace cohort {

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
inline double now_s() { return static_cast<double>(now_ns()) * 1e-9; }

}  // namespace cohort
