// A small thread-safe ring of recent cluster events (a node lost, the model placed again, a
// slow link, a key refused) for the dashboard and logs. The oldest events fall out once
// capacity is reached; each event has a sequence number so readers can tell new from seen.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace cohort::runtime {

struct ClusterEvent {
  uint64_t seq = 0;     // 1, 2, ... in the order appended
  int64_t unix_ms = 0;  // wall-clock time appended
  std::string kind;     // node_lost | replaced | no_placement | slow_link | refused | ...
  std::string message;  // one line for people
};

class EventLog {
 public:
  explicit EventLog(size_t capacity = 64) : capacity_(capacity == 0 ? 1 : capacity) {}

  // Thread-safe.
  void append(std::string kind, std::string message);
  // The events still held, oldest first. Thread-safe.
  std::vector<ClusterEvent> recent() const;

 private:
  mutable std::mutex mu_;
  size_t capacity_;
  uint64_t next_seq_ = 1;
  std::deque<ClusterEvent> events_;
};

}  // namespace cohort::runtime
