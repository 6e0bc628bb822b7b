// A decorator that counts what passes through a communicator: operations, payload bytes and
// the wall time spent inside them, for benchmarks that report syncs and communication time
// per token (`cohort bench cluster`).
//
// Every call is forwarded unchanged to the wrapped communicator (the collectives too, so the
// algorithm and its bit-exact result are the inner one's); only the counters are added. One
// operation is one call: a collective, a send, a receive, or one send_recv/exchange of a
// subgroup built on top. Bytes are the payload the call names (a collective's vector once,
// not what its algorithm moves). Time includes waiting for peers, so a receive that waits
// for a remote stage's compute counts that wait as communication.
//
// Several decorators may add into one CommCounters (a rank's world and stage groups).
// Ownership: the decorator owns `inner`. Thread-safety: as Communicator; the counters are
// atomic, so another thread may read them while the driving thread communicates.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "comm/communicator.h"

namespace cohort::comm {

// A snapshot of the counters; subtract two to get the traffic between them.
struct CommTotals {
  int64_t ops = 0;
  int64_t bytes = 0;
  int64_t ns = 0;
  CommTotals operator-(const CommTotals& o) const {
    return {ops - o.ops, bytes - o.bytes, ns - o.ns};
  }
};

class CommCounters {
 public:
  void add(int64_t bytes, int64_t ns) {
    ops_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
    ns_.fetch_add(ns, std::memory_order_relaxed);
  }
  CommTotals totals() const {
    return {ops_.load(std::memory_order_relaxed), bytes_.load(std::memory_order_relaxed),
            ns_.load(std::memory_order_relaxed)};
  }

 private:
  std::atomic<int64_t> ops_{0}, bytes_{0}, ns_{0};
};

// name() is inner's name. counters must not be null.
std::unique_ptr<Communicator> make_counting_communicator(std::unique_ptr<Communicator> inner,
                                                         std::shared_ptr<CommCounters> counters);

}  // namespace cohort::comm
