#include "comm/in_process_group.h"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>

namespace cohort::comm {
namespace {

struct Shared {
  explicit Shared(int n) : size(n), slots(n) {}

  const int size;
  std::mutex mu;
  std::condition_variable cv;
  // Rendezvous of the current collective: every rank deposits its bytes in its slot; the last
  // to arrive bumps the generation, and each rank then reads all slots and leaves. A new
  // collective cannot start depositing until every rank has left the previous one.
  uint64_t generation = 0;
  int arrived = 0;
  int leaving = 0;
  std::vector<std::vector<uint8_t>> slots;
  std::map<std::pair<int, int>, std::deque<std::vector<uint8_t>>> mailbox;  // (src, dst)
};

class InProcessCommunicator final : public Communicator {
 public:
  InProcessCommunicator(std::shared_ptr<Shared> s, int rank) : s_(std::move(s)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return s_->size; }
  std::string name() const override { return "in-process"; }

  Status send(int peer, const void* data, size_t bytes, int64_t) override {
    if (peer < 0 || peer >= s_->size || peer == rank_) return bad_peer(peer);
    std::lock_guard<std::mutex> lock(s_->mu);
    const auto* p = static_cast<const uint8_t*>(data);
    s_->mailbox[{rank_, peer}].emplace_back(p, p + bytes);
    s_->cv.notify_all();
    return Status::ok();
  }

  Status recv(int peer, void* data, size_t bytes, int64_t timeout_ms) override {
    if (peer < 0 || peer >= s_->size || peer == rank_) return bad_peer(peer);
    std::unique_lock<std::mutex> lock(s_->mu);
    auto& q = s_->mailbox[{peer, rank_}];
    if (!s_->cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return !q.empty(); })) {
      return Status::timeout("in-process: rank " + std::to_string(rank_) + " recv from " +
                             std::to_string(peer) + " timed out");
    }
    std::vector<uint8_t> msg = std::move(q.front());
    q.pop_front();
    if (msg.size() != bytes) {
      return Status::corrupt("in-process: rank " + std::to_string(rank_) + " expected " +
                             std::to_string(bytes) + " bytes, got " + std::to_string(msg.size()));
    }
    if (bytes > 0) std::memcpy(data, msg.data(), bytes);
    return Status::ok();
  }

  Status all_reduce_sum(float* data, size_t n, int64_t timeout_ms) override {
    return collective(data, n * sizeof(float), timeout_ms, [&](const Shared& s) {
      for (size_t i = 0; i < n; ++i) {
        float sum = 0;  // rank order, so every rank computes the identical sum
        for (int r = 0; r < s.size; ++r)
          sum += reinterpret_cast<const float*>(s.slots[r].data())[i];
        data[i] = sum;
      }
    });
  }

  Status all_gather(const void* in, void* out, size_t bytes, int64_t timeout_ms) override {
    return collective(in, bytes, timeout_ms, [&](const Shared& s) {
      if (bytes == 0) return;  // empty slots have no data pointer to copy from
      for (int r = 0; r < s.size; ++r)
        std::memcpy(static_cast<uint8_t*>(out) + r * bytes, s.slots[r].data(), bytes);
    });
  }

  Status broadcast(void* data, size_t bytes, int root, int64_t timeout_ms) override {
    if (root < 0 || root >= s_->size) return bad_peer(root);
    return collective(data, bytes, timeout_ms, [&](const Shared& s) {
      if (rank_ != root && bytes > 0) std::memcpy(data, s.slots[root].data(), bytes);
    });
  }

  Status barrier(int64_t timeout_ms) override {
    return collective(nullptr, 0, timeout_ms, [](const Shared&) {});
  }

 private:
  Status bad_peer(int peer) const {
    return Status::invalid_argument("in-process: rank " + std::to_string(rank_) + " has no peer " +
                                    std::to_string(peer));
  }

  template <typename Finish>
  Status collective(const void* data, size_t bytes, int64_t timeout_ms, Finish finish) {
    Shared& s = *s_;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    std::unique_lock<std::mutex> lock(s.mu);
    if (!s.cv.wait_until(lock, deadline, [&] { return s.leaving == 0; })) return timed_out();
    const auto* p = static_cast<const uint8_t*>(data);
    if (bytes > 0) {
      s.slots[rank_].assign(p, p + bytes);
    } else {
      s.slots[rank_].clear();
    }
    const uint64_t gen = s.generation;
    if (++s.arrived == s.size) {
      s.arrived = 0;
      s.leaving = s.size;
      ++s.generation;
      s.cv.notify_all();
    } else if (!s.cv.wait_until(lock, deadline, [&] { return s.generation != gen; })) {
      --s.arrived;  // withdraw, so the group is not left half-entered
      return timed_out();
    }
    finish(s);
    if (--s.leaving == 0) s.cv.notify_all();
    return Status::ok();
  }

  Status timed_out() const {
    return Status::timeout("in-process: rank " + std::to_string(rank_) + " collective timed out");
  }

  std::shared_ptr<Shared> s_;
  int rank_;
};

}  // namespace

std::vector<std::unique_ptr<Communicator>> make_in_process_group(int n) {
  auto shared = std::make_shared<Shared>(n);
  std::vector<std::unique_ptr<Communicator>> group;
  for (int r = 0; r < n; ++r) group.push_back(std::make_unique<InProcessCommunicator>(shared, r));
  return group;
}

}  // namespace cohort::comm
