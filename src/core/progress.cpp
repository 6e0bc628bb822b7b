#include "core/progress.h"

#include <algorithm>

#include "core/clock.h"
#include "core/log.h"

namespace cohort {

ProgressMeter::ProgressMeter(std::string label, uint64_t total_bytes, double interval_s)
    : label_(std::move(label)), total_(total_bytes), interval_s_(interval_s) {
  start_s_ = last_s_ = now_s();
}

void ProgressMeter::update(uint64_t done) {
  done_ = done;
  const double t = now_s();
  if (t - last_s_ < interval_s_ || done >= total_) return;
  last_s_ = t;
  const double pct = total_ ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 0;
  COHORT_LOG_INFO("%s: %.0f%% (%.1f of %.1f MiB, %.0f MB/s)", label_.c_str(), pct, done / 1048576.0,
                  total_ / 1048576.0, done / std::max(1e-9, t - start_s_) / 1e6);
}

void ProgressMeter::finish() {
  if (finished_) return;
  finished_ = true;
  const double dt = std::max(1e-9, now_s() - start_s_);
  COHORT_LOG_INFO("%s: done, %.1f MiB in %.2f s (%.0f MB/s)", label_.c_str(), done_ / 1048576.0, dt,
                  done_ / dt / 1e6);
}

}  // namespace cohort
