#include "runtime/event_log.h"

#include <chrono>

namespace cohort::runtime {

void EventLog::append(std::string kind, std::string message) {
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back({next_seq_++, now_ms, std::move(kind), std::move(message)});
  while (events_.size() > capacity_) events_.pop_front();
}

std::vector<ClusterEvent> EventLog::recent() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {events_.begin(), events_.end()};
}

}  // namespace cohort::runtime
