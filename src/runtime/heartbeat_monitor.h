// The head's side of failure detection: one thread reads every worker's control connection
// while the workers serve steps, and declares a worker lost when its connection fails (the
// process died: noticed at once) or when no cluster::kMsgHeartbeat has come for silence_ms
// (a cut link or a frozen machine, where nothing closes the connection). The first loss is
// reported once, through on_lost on the monitor's thread, and monitoring then ends: the
// placement is over and is placed again (runtime/replacing_stepper.h).
//
// Reading frames the head has not asked for is safe because a worker sends nothing else on
// its control connection between joining the data plane and the end of its step loop. The
// monitor is the connections' only reader while it lives; writers may run beside it.
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

class HeartbeatMonitor {
 public:
  struct Peer {
    std::string name;
    net::Socket* control = nullptr;  // must outlive the monitor
  };
  // on_lost(reason) runs once, on the monitor's thread; on_beat(peer index, payload), when
  // given, for every heartbeat, on the same thread. Silence is counted from construction.
  HeartbeatMonitor(
      std::vector<Peer> peers, int64_t silence_ms,
      std::function<void(const std::string& reason)> on_lost,
      std::function<void(size_t peer, const std::vector<uint8_t>& payload)> on_beat = nullptr);
  // Stops and joins the thread.
  ~HeartbeatMonitor();
  HeartbeatMonitor(const HeartbeatMonitor&) = delete;
  HeartbeatMonitor& operator=(const HeartbeatMonitor&) = delete;

  // Why a worker was declared lost; "" while all are heard. Any thread.
  std::string lost() const;

 private:
  void loop();
  // Reads every frame waiting on peer i; "" or why the peer is lost.
  std::string drain(size_t i, int64_t now_ms);

  std::vector<Peer> peers_;
  std::vector<int64_t> last_heard_ms_;  // monitor thread only
  int64_t silence_ms_;
  std::function<void(const std::string&)> on_lost_;
  std::function<void(size_t, const std::vector<uint8_t>&)> on_beat_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::string lost_;   // guarded by mu_
  std::thread thread_;
};

}  // namespace cohort::runtime
