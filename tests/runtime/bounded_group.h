// A model of a transport whose sends block, for tests of deadlock freedom: an in-process
// group where, per ordered pair of ranks, at most capacity_bytes may be sent and not yet
// received. A send that would exceed that waits until the receiver has taken enough, or until
// the pair is empty and the receiver waits for this sender (then the message streams through,
// as through a socket). Collectives are built on these sends (P2PCommunicator), as on tcp.
// Every wait ends after at most max_wait_ms with kTimeout, so a deadlock fails a test quickly.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "comm/collectives.h"
#include "comm/in_process_group.h"

namespace cohort::testing {

class BoundedGroup {
 public:
  static std::vector<std::unique_ptr<comm::Communicator>> make(int n, size_t capacity_bytes,
                                                               int64_t max_wait_ms) {
    auto shared = std::make_shared<Shared>();
    shared->capacity = capacity_bytes;
    shared->max_wait_ms = max_wait_ms;
    auto inner = comm::make_in_process_group(n);
    std::vector<std::unique_ptr<comm::Communicator>> out;
    for (int r = 0; r < n; ++r)
      out.push_back(std::make_unique<Member>(shared, std::move(inner[r])));
    return out;
  }

 private:
  struct Shared {
    size_t capacity = 0;
    int64_t max_wait_ms = 0;
    std::mutex mu;
    std::condition_variable cv;
    std::map<std::pair<int, int>, size_t> unread;  // (src, dst) -> bytes sent, not received
    std::map<std::pair<int, int>, bool> waiting;   // (src, dst): dst waits in recv from src
  };

  class Member final : public comm::P2PCommunicator {
   public:
    Member(std::shared_ptr<Shared> s, std::unique_ptr<comm::Communicator> inner)
        : s_(std::move(s)), inner_(std::move(inner)) {}
    int rank() const override { return inner_->rank(); }
    int size() const override { return inner_->size(); }
    std::string name() const override { return "bounded"; }

    Status send(int peer, const void* data, size_t bytes, int64_t timeout_ms) override {
      const auto key = std::make_pair(rank(), peer);
      std::unique_lock<std::mutex> lock(s_->mu);
      const bool ok = s_->cv.wait_for(lock, wait(timeout_ms), [&] {
        return s_->unread[key] + bytes <= s_->capacity ||
               (s_->unread[key] == 0 && s_->waiting[key]);
      });
      if (!ok) {
        return Status::timeout("bounded: rank " + std::to_string(rank()) + " send of " +
                               std::to_string(bytes) + " bytes to " + std::to_string(peer) +
                               " blocked");
      }
      s_->unread[key] += bytes;
      lock.unlock();
      return inner_->send(peer, data, bytes, timeout_ms);
    }

    Status recv(int peer, void* data, size_t bytes, int64_t timeout_ms) override {
      const auto key = std::make_pair(peer, rank());
      {
        std::lock_guard<std::mutex> lock(s_->mu);
        s_->waiting[key] = true;
      }
      s_->cv.notify_all();
      Status st = inner_->recv(peer, data, bytes, wait(timeout_ms).count());
      {
        std::lock_guard<std::mutex> lock(s_->mu);
        s_->waiting[key] = false;
        if (st.is_ok()) s_->unread[key] -= bytes;
      }
      s_->cv.notify_all();
      return st;
    }

   private:
    std::chrono::milliseconds wait(int64_t timeout_ms) const {
      return std::chrono::milliseconds(std::min(timeout_ms, s_->max_wait_ms));
    }
    std::shared_ptr<Shared> s_;
    std::unique_ptr<comm::Communicator> inner_;
  };
};

}  // namespace cohort::testing
