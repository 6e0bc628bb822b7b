#include "runtime/heartbeat_monitor.h"

#include <chrono>
#include <cstdio>

#include "cluster/protocol.h"
#include "core/clock.h"
#include "core/log.h"
#include "net/frame.h"

namespace cohort::runtime {
namespace {

// How often the connections are looked at: the detection delay's granularity.
constexpr int64_t kPollMs = 50;
// A heartbeat frame is a few bytes: once its first byte is readable, the rest follows at once.
constexpr int64_t kFrameTimeoutMs = 1000;
constexpr size_t kMaxHeartbeatPayload = 4096;

int64_t now_ms() { return now_ns() / 1'000'000; }

}  // namespace

HeartbeatMonitor::HeartbeatMonitor(
    std::vector<Peer> peers, int64_t silence_ms,
    std::function<void(const std::string& reason)> on_lost,
    std::function<void(size_t peer, const std::vector<uint8_t>& payload)> on_beat)
    : peers_(std::move(peers)),
      last_heard_ms_(peers_.size(), now_ms()),
      silence_ms_(silence_ms),
      on_lost_(std::move(on_lost)),
      on_beat_(std::move(on_beat)),
      thread_([this] { loop(); }) {}

HeartbeatMonitor::~HeartbeatMonitor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::string HeartbeatMonitor::lost() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lost_;
}

std::string HeartbeatMonitor::drain(size_t i, int64_t now) {
  const Peer& p = peers_[i];
  for (;;) {
    Result<bool> readable = p.control->wait_readable(0);
    if (!readable.is_ok())
      return p.name + ": control connection failed: " + readable.status().message();
    if (!*readable) return {};
    auto f = net::read_frame(*p.control, kMaxHeartbeatPayload, kFrameTimeoutMs);
    if (!f.is_ok()) return p.name + ": control connection failed: " + f.status().message();
    if (f->type != cluster::kMsgHeartbeat) {
      return p.name + " sent control message " + std::to_string(f->type) + " while serving steps";
    }
    last_heard_ms_[i] = now;
    if (on_beat_) on_beat_(i, f->payload);
  }
}

void HeartbeatMonitor::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    // Everything waiting is read before any silence is judged, so a head that was itself not
    // scheduled for a while does not mistake its own delay for the workers'.
    const int64_t now = now_ms();
    std::string why;
    for (size_t i = 0; i < peers_.size() && why.empty(); ++i) why = drain(i, now);
    for (size_t i = 0; i < peers_.size() && why.empty(); ++i) {
      const int64_t silent = now - last_heard_ms_[i];
      if (silent > silence_ms_) {
        char buf[160];
        std::snprintf(buf, sizeof(buf), "%s: no heartbeat for %.1f s", peers_[i].name.c_str(),
                      static_cast<double>(silent) / 1000.0);
        why = buf;
      }
    }
    if (!why.empty()) {
      COHORT_LOG_WARN("cluster: node lost: %s", why.c_str());
      lock.lock();
      lost_ = why;
      lock.unlock();
      on_lost_(why);
      return;
    }
    lock.lock();
    cv_.wait_for(lock, std::chrono::milliseconds(kPollMs), [this] { return stop_; });
  }
}

}  // namespace cohort::runtime
