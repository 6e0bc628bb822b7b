// A point in steady time by which a blocking call must finish, shared by the comm backends
// so a collective made of many point-to-point steps honours one timeout as a whole.
//
// timeout_ms < 0 means "no limit" (remaining_ms() then stays negative, which the net layer
// reads as "wait without limit" too); 0 means "only what is possible right now".
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace cohort::comm {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Deadline(int64_t timeout_ms)
      : unlimited_(timeout_ms < 0),
        at_(unlimited_ ? Clock::time_point::max()
                       : Clock::now() + std::chrono::milliseconds(timeout_ms)) {}

  bool unlimited() const { return unlimited_; }
  bool expired() const { return !unlimited_ && Clock::now() >= at_; }
  Clock::time_point at() const { return at_; }

  // Milliseconds left, rounded up so a sub-millisecond remainder is not read as "expired";
  // -1 when unlimited, 0 once passed.
  int64_t remaining_ms() const {
    if (unlimited_) return -1;
    const auto left = at_ - Clock::now();
    if (left <= Clock::duration::zero()) return 0;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
    return std::max<int64_t>(1, ms + 1);
  }

 private:
  bool unlimited_;
  Clock::time_point at_;
};

}  // namespace cohort::comm
