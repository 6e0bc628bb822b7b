#include "comm/counting_communicator.h"

#include "comm/collectives.h"
#include "core/check.h"
#include "core/clock.h"

namespace cohort::comm {
namespace {

// Times one forwarded call and adds it to the counters.
class Counted {
 public:
  Counted(CommCounters& c, size_t bytes) : c_(c), bytes_(static_cast<int64_t>(bytes)) {}
  ~Counted() { c_.add(bytes_, now_ns() - t0_); }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;

 private:
  CommCounters& c_;
  int64_t bytes_;
  int64_t t0_ = now_ns();
};

// A P2PCommunicator, so that a subgroup built on it still finds overlapping send_recv and
// exchange; every collective is nevertheless forwarded to the inner communicator whole.
class CountingCommunicator final : public P2PCommunicator {
 public:
  CountingCommunicator(std::unique_ptr<Communicator> inner, std::shared_ptr<CommCounters> c)
      : inner_(std::move(inner)),
        inner_p2p_(dynamic_cast<P2PCommunicator*>(inner_.get())),
        c_(std::move(c)) {
    COHORT_CHECK(inner_ != nullptr && c_ != nullptr);
  }

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string name() const override { return inner_->name(); }

  Status send(int peer, const void* data, size_t bytes, int64_t timeout_ms) override {
    Counted t(*c_, bytes);
    return inner_->send(peer, data, bytes, timeout_ms);
  }
  Status recv(int peer, void* data, size_t bytes, int64_t timeout_ms) override {
    Counted t(*c_, bytes);
    return inner_->recv(peer, data, bytes, timeout_ms);
  }
  Status all_reduce_sum(float* data, size_t n, int64_t timeout_ms) override {
    Counted t(*c_, n * sizeof(float));
    return inner_->all_reduce_sum(data, n, timeout_ms);
  }
  Status all_gather(const void* in, void* out, size_t bytes_per_rank, int64_t timeout_ms) override {
    Counted t(*c_, bytes_per_rank);
    return inner_->all_gather(in, out, bytes_per_rank, timeout_ms);
  }
  Status broadcast(void* data, size_t bytes, int root, int64_t timeout_ms) override {
    Counted t(*c_, bytes);
    return inner_->broadcast(data, bytes, root, timeout_ms);
  }
  Status barrier(int64_t timeout_ms) override {
    Counted t(*c_, 0);
    return inner_->barrier(timeout_ms);
  }

  Status send_recv(int to, const void* sdata, size_t sbytes, int from, void* rdata, size_t rbytes,
                   int64_t timeout_ms) override {
    Counted t(*c_, sbytes + rbytes);
    if (inner_p2p_ != nullptr) {
      return inner_p2p_->send_recv(to, sdata, sbytes, from, rdata, rbytes, timeout_ms);
    }
    return ordered_send_recv(*inner_, to, sdata, sbytes, from, rdata, rbytes, timeout_ms);
  }
  Status exchange(std::span<const SendSpec> sends, std::span<const RecvSpec> recvs,
                  int64_t timeout_ms) override {
    size_t bytes = 0;
    for (const SendSpec& s : sends) bytes += s.bytes;
    for (const RecvSpec& r : recvs) bytes += r.bytes;
    Counted t(*c_, bytes);
    if (inner_p2p_ != nullptr) return inner_p2p_->exchange(sends, recvs, timeout_ms);
    return exchange_in_order(*inner_, sends, recvs, timeout_ms);
  }

 private:
  std::unique_ptr<Communicator> inner_;
  P2PCommunicator* inner_p2p_;  // inner_ when it can overlap sends and receives, else null
  std::shared_ptr<CommCounters> c_;
};

}  // namespace

std::unique_ptr<Communicator> make_counting_communicator(std::unique_ptr<Communicator> inner,
                                                         std::shared_ptr<CommCounters> counters) {
  return std::make_unique<CountingCommunicator>(std::move(inner), std::move(counters));
}

}  // namespace cohort::comm
