#include "runtime/serving_stats.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace cohort::runtime {
namespace {

int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

ServingStats::ServingStats(int64_t n_slots, double window_s)
    : n_slots_(std::max<int64_t>(n_slots, 1)), window_s_(window_s > 0 ? window_s : 5.0) {}

void ServingStats::request_started(int64_t prompt_tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  ++totals_.requests_total;
  ++totals_.in_flight;
  totals_.prompt_tokens += prompt_tokens;
}

void ServingStats::request_ended(const char* outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  --totals_.in_flight;
  if (std::strcmp(outcome, "ok") == 0) {
    ++totals_.requests_ok;
  } else if (std::strcmp(outcome, "cancelled") == 0) {
    ++totals_.requests_cancelled;
  } else {
    ++totals_.requests_failed;
  }
}

void ServingStats::token_generated() {
  const int64_t bucket = steady_ms() / kBucketMs;
  std::lock_guard<std::mutex> lock(mu_);
  ++totals_.generated_tokens;
  if (!buckets_.empty() && buckets_.back().first == bucket) {
    ++buckets_.back().second;
  } else {
    buckets_.emplace_back(bucket, 1);
  }
  expire(bucket);
}

void ServingStats::expire(int64_t now_bucket) const {
  const auto window_buckets = static_cast<int64_t>(window_s_ * 1000 / kBucketMs);
  while (!buckets_.empty() && buckets_.front().first <= now_bucket - window_buckets) {
    buckets_.pop_front();
  }
}

EngineStats ServingStats::snapshot() const {
  const int64_t bucket = steady_ms() / kBucketMs;
  std::lock_guard<std::mutex> lock(mu_);
  expire(bucket);
  EngineStats s = totals_;
  s.n_slots = n_slots_;
  // The scheduler admits queued requests into free slots first come first served, so of
  // the requests in flight the first n_slots hold a slot and the rest wait.
  s.active_slots = std::min(s.in_flight, n_slots_);
  s.queue_depth = s.in_flight - s.active_slots;
  s.window_s = window_s_;
  int64_t tokens = 0;
  for (const auto& b : buckets_) tokens += b.second;
  s.tokens_per_s = static_cast<double>(tokens) / window_s_;
  return s;
}

}  // namespace cohort::runtime
