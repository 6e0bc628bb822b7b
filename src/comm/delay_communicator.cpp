#include "comm/delay_communicator.h"

#include <chrono>
#include <thread>

#include "comm/collectives.h"
#include "comm/deadline.h"

namespace cohort::comm {
namespace {

// Sleeping is coarse (a wake-up costs ~100 us here), so sleep only the part of the delay that
// lies further away than that and spin the rest.
void wait_us(int64_t us) {
  if (us <= 0) return;
  using Clock = std::chrono::steady_clock;
  const auto until = Clock::now() + std::chrono::microseconds(us);
  constexpr int64_t kSpinUs = 150;
  if (us > kSpinUs) std::this_thread::sleep_for(std::chrono::microseconds(us - kSpinUs));
  while (Clock::now() < until) {
  }
}

class DelayCommunicator final : public P2PCommunicator {
 public:
  DelayCommunicator(std::unique_ptr<Communicator> inner, int64_t delay_us)
      : inner_(std::move(inner)),
        inner_p2p_(dynamic_cast<P2PCommunicator*>(inner_.get())),
        delay_us_(delay_us < 0 ? 0 : delay_us) {}

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string name() const override { return "delay(" + inner_->name() + ")"; }

  Status send(int peer, const void* data, size_t bytes, int64_t timeout_ms) override {
    Deadline deadline(timeout_ms);
    wait_us(delay_us_);
    return inner_->send(peer, data, bytes, deadline.remaining_ms());
  }
  Status recv(int peer, void* data, size_t bytes, int64_t timeout_ms) override {
    return inner_->recv(peer, data, bytes, timeout_ms);
  }

  Status send_recv(int to, const void* sdata, size_t sbytes, int from, void* rdata, size_t rbytes,
                   int64_t timeout_ms) override {
    Deadline deadline(timeout_ms);
    wait_us(delay_us_);
    if (inner_p2p_ != nullptr) {
      return inner_p2p_->send_recv(to, sdata, sbytes, from, rdata, rbytes, deadline.remaining_ms());
    }
    return ordered_send_recv(*inner_, to, sdata, sbytes, from, rdata, rbytes,
                             deadline.remaining_ms());
  }

  Status exchange(std::span<const SendSpec> sends, std::span<const RecvSpec> recvs,
                  int64_t timeout_ms) override {
    Deadline deadline(timeout_ms);
    if (!sends.empty()) wait_us(delay_us_);
    if (inner_p2p_ != nullptr) return inner_p2p_->exchange(sends, recvs, deadline.remaining_ms());
    return exchange_in_order(*inner_, sends, recvs, deadline.remaining_ms());
  }

 private:
  std::unique_ptr<Communicator> inner_;
  P2PCommunicator* inner_p2p_;  // inner_ when it can overlap sends and receives, else null
  int64_t delay_us_;
};

}  // namespace

std::unique_ptr<Communicator> make_delay_communicator(std::unique_ptr<Communicator> inner,
                                                      int64_t one_way_delay_us) {
  return std::make_unique<DelayCommunicator>(std::move(inner), one_way_delay_us);
}

}  // namespace cohort::comm
