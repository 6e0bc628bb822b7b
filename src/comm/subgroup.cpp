#include "comm/subgroup.h"

#include <algorithm>
#include <string>

#include "comm/collectives.h"

namespace cohort::comm {
namespace {

class Subgroup final : public P2PCommunicator {
 public:
  Subgroup(Communicator& world, std::vector<int> world_ranks, int rank)
      : world_(world),
        world_p2p_(dynamic_cast<P2PCommunicator*>(&world)),
        world_ranks_(std::move(world_ranks)),
        rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(world_ranks_.size()); }
  std::string name() const override { return world_.name() + "/sub"; }

  Status send(int peer, const void* data, size_t bytes, int64_t timeout_ms) override {
    COHORT_RETURN_IF_ERROR(check_peer(peer));
    return world_.send(world_ranks_[static_cast<size_t>(peer)], data, bytes, timeout_ms);
  }
  Status recv(int peer, void* data, size_t bytes, int64_t timeout_ms) override {
    COHORT_RETURN_IF_ERROR(check_peer(peer));
    return world_.recv(world_ranks_[static_cast<size_t>(peer)], data, bytes, timeout_ms);
  }

  Status send_recv(int to, const void* sdata, size_t sbytes, int from, void* rdata, size_t rbytes,
                   int64_t timeout_ms) override {
    if (world_p2p_ == nullptr) {
      return ordered_send_recv(*this, to, sdata, sbytes, from, rdata, rbytes, timeout_ms);
    }
    COHORT_RETURN_IF_ERROR(check_peer(to));
    COHORT_RETURN_IF_ERROR(check_peer(from));
    return world_p2p_->send_recv(world_of(to), sdata, sbytes, world_of(from), rdata, rbytes,
                                 timeout_ms);
  }

  Status exchange(std::span<const SendSpec> sends, std::span<const RecvSpec> recvs,
                  int64_t timeout_ms) override {
    if (world_p2p_ == nullptr) return exchange_in_order(*this, sends, recvs, timeout_ms);
    std::vector<SendSpec> wsends(sends.begin(), sends.end());
    std::vector<RecvSpec> wrecvs(recvs.begin(), recvs.end());
    for (SendSpec& s : wsends) {
      COHORT_RETURN_IF_ERROR(check_peer(s.peer));
      s.peer = world_of(s.peer);
    }
    for (RecvSpec& r : wrecvs) {
      COHORT_RETURN_IF_ERROR(check_peer(r.peer));
      r.peer = world_of(r.peer);
    }
    return world_p2p_->exchange(wsends, wrecvs, timeout_ms);
  }

 private:
  int world_of(int peer) const { return world_ranks_[static_cast<size_t>(peer)]; }

  Status check_peer(int peer) const {
    if (peer >= 0 && peer < size() && peer != rank_) return Status::ok();
    return Status::invalid_argument("subgroup: rank " + std::to_string(rank_) + " has no peer " +
                                    std::to_string(peer) + " in a group of " +
                                    std::to_string(size()));
  }

  Communicator& world_;
  P2PCommunicator* world_p2p_;  // &world_ when it can overlap sends and receives, else null
  std::vector<int> world_ranks_;
  int rank_;
};

}  // namespace

Result<std::unique_ptr<Communicator>> make_subgroup(Communicator& world,
                                                    std::vector<int> world_ranks) {
  if (world_ranks.empty()) return Status::invalid_argument("subgroup: no ranks given");
  std::vector<int> sorted = world_ranks;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return Status::invalid_argument("subgroup: a world rank is listed twice");
  }
  if (sorted.front() < 0 || sorted.back() >= world.size()) {
    return Status::invalid_argument("subgroup: ranks must lie in 0.." +
                                    std::to_string(world.size() - 1));
  }
  const auto it = std::find(world_ranks.begin(), world_ranks.end(), world.rank());
  if (it == world_ranks.end()) {
    return Status::invalid_argument("subgroup: world rank " + std::to_string(world.rank()) +
                                    " is not a member");
  }
  const int rank = static_cast<int>(it - world_ranks.begin());
  return std::unique_ptr<Communicator>(
      std::make_unique<Subgroup>(world, std::move(world_ranks), rank));
}

}  // namespace cohort::comm
