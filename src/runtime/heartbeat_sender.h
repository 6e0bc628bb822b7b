// A worker's side of failure detection: while it serves a head's steps, a thread of its own
// sends cluster::kMsgHeartbeat on the head's control connection every interval, so the head
// hears from it even when the data plane carries nothing towards the head (a pipeline's first
// stages). Nothing on the token path waits for it.
//
// The sender is the control socket's only writer while it lives; the session's thread must
// not write on it until the sender is destroyed. A failed write (the head gone, a cut link)
// ends the beats quietly: the head notices the silence, the step loop its broken links.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net/socket.h"

namespace cohort::runtime {

class HeartbeatSender {
 public:
  // payload() is called on the sender's thread before each beat (it must be thread-safe);
  // null sends empty beats. control must outlive the sender. The first beat goes at once.
  HeartbeatSender(net::Socket& control, int64_t interval_ms, std::string name,
                  std::function<std::vector<uint8_t>()> payload = nullptr);
  // Stops and joins the thread (within one write's timeout at most).
  ~HeartbeatSender();
  HeartbeatSender(const HeartbeatSender&) = delete;
  HeartbeatSender& operator=(const HeartbeatSender&) = delete;

 private:
  void loop();

  net::Socket& control_;
  int64_t interval_ms_;
  std::string name_;
  std::function<std::vector<uint8_t>()> payload_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace cohort::runtime
