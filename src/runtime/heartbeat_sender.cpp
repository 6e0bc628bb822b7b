#include "runtime/heartbeat_sender.h"

#include <chrono>

#include "cluster/protocol.h"
#include "core/log.h"
#include "net/frame.h"

namespace cohort::runtime {

HeartbeatSender::HeartbeatSender(net::Socket& control, int64_t interval_ms, std::string name,
                                 std::function<std::vector<uint8_t>()> payload)
    : control_(control),
      interval_ms_(interval_ms),
      name_(std::move(name)),
      payload_(std::move(payload)),
      thread_([this] { loop(); }) {}

HeartbeatSender::~HeartbeatSender() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void HeartbeatSender::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    const std::vector<uint8_t> body = payload_ ? payload_() : std::vector<uint8_t>{};
    // A beat that cannot leave within one interval is as good as lost; waiting longer
    // would only delay stopping.
    const Status st =
        net::write_frame(control_, cluster::kMsgHeartbeat, body.data(), body.size(), interval_ms_);
    lock.lock();
    if (!st.is_ok()) {
      if (!stop_)
        COHORT_LOG_WARN("worker %s: heartbeats stopped: %s", name_.c_str(), st.message().c_str());
      return;
    }
    cv_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [this] { return stop_; });
  }
}

}  // namespace cohort::runtime
