// Progress of long work (weight transfer, loading) as log lines a person can follow:
// "label: 45% (120.0 of 260.0 MiB, 310 MB/s)", at most one line per interval, and a final
// line with the total time and rate. Not thread-safe: one meter per worker thread.
#pragma once

#include <cstdint>
#include <string>

namespace cohort {

class ProgressMeter {
 public:
  ProgressMeter(std::string label, uint64_t total_bytes, double interval_s = 1.0);
  // done: bytes so far (monotonic).
  void update(uint64_t done);
  // Logs the closing line (once).
  void finish();

 private:
  std::string label_;
  uint64_t total_;
  double interval_s_, start_s_, last_s_;
  uint64_t done_ = 0;
  bool finished_ = false;
};

}  // namespace cohort
