// Live figures of a serving engine for /metrics and the dashboard: request and token
// counters since start, requests in flight (those holding a slot and those queued for one),
// and generated tokens per second over a sliding window.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <utility>

namespace cohort::runtime {

struct EngineStats {
  int64_t requests_total = 0;  // started
  int64_t requests_ok = 0;
  int64_t requests_failed = 0;
  int64_t requests_cancelled = 0;  // the client went away
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  int64_t in_flight = 0;     // started, not yet ended
  int64_t active_slots = 0;  // in flight and holding a sequence slot
  int64_t queue_depth = 0;   // in flight and waiting for a slot
  int64_t n_slots = 0;
  double tokens_per_s = 0;  // generated, over the last window_s
  double window_s = 0;
};

class ServingStats {
 public:
  // n_slots: the engine's sequence slots (requests beyond them wait in the queue).
  explicit ServingStats(int64_t n_slots, double window_s = 5.0);

  void request_started(int64_t prompt_tokens);
  // outcome: "ok", "failed" or "cancelled".
  void request_ended(const char* outcome);
  void token_generated();

  EngineStats snapshot() const;

 private:
  // Drops buckets older than the window; mu_ held.
  void expire(int64_t now_bucket) const;

  static constexpr int64_t kBucketMs = 100;
  const int64_t n_slots_;
  const double window_s_;
  mutable std::mutex mu_;
  EngineStats totals_;
  // (bucket index = unix ms / kBucketMs, tokens generated in it), oldest first.
  mutable std::deque<std::pair<int64_t, int64_t>> buckets_;
};

}  // namespace cohort::runtime
