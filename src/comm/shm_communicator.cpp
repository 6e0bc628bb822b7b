#include "comm/shm_communicator.h"

#include <chrono>
#include <cstring>
#include <span>
#include <thread>
#include <vector>

#include "comm/collectives.h"
#include "comm/deadline.h"
#include "comm/shm_segment.h"

namespace cohort::comm {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

constexpr uint64_t kHeaderBytes = sizeof(uint64_t);  // each message: its length, then payload

// One message in progress in either direction.
struct Op {
  int peer;
  uint8_t* data;  // the source for a send (never written), the destination for a recv
  uint64_t bytes;
  uint64_t done = 0;
  bool header_done = false;
  bool complete() const { return header_done && done == bytes; }
  bool started() const { return header_done || done > 0; }
};

class ShmCommunicator final : public P2PCommunicator {
 public:
  ShmCommunicator(shm::Segment segment, int64_t spin_us)
      : seg_(std::move(segment)),
        spin_(std::chrono::microseconds(spin_us < 0 ? 0 : spin_us)),
        broken_(static_cast<size_t>(seg_.size()), false) {
    const int n = seg_.size();
    out_.resize(static_cast<size_t>(n));
    in_.resize(static_cast<size_t>(n));
    for (int p = 0; p < n; ++p) {
      if (p == seg_.rank()) continue;
      out_[static_cast<size_t>(p)] = seg_.ring(seg_.rank(), p);
      in_[static_cast<size_t>(p)] = seg_.ring(p, seg_.rank());
    }
  }

  int rank() const override { return seg_.rank(); }
  int size() const override { return seg_.size(); }
  std::string name() const override { return "shm"; }

  Status send(int peer, const void* data, size_t bytes, int64_t timeout_ms) override {
    Op op{peer, const_cast<uint8_t*>(static_cast<const uint8_t*>(data)), bytes};
    return run(std::span<Op>(&op, 1), {}, timeout_ms);
  }
  Status recv(int peer, void* data, size_t bytes, int64_t timeout_ms) override {
    Op op{peer, static_cast<uint8_t*>(data), bytes};
    return run({}, std::span<Op>(&op, 1), timeout_ms);
  }
  Status send_recv(int to, const void* sdata, size_t sbytes, int from, void* rdata, size_t rbytes,
                   int64_t timeout_ms) override {
    Op s{to, const_cast<uint8_t*>(static_cast<const uint8_t*>(sdata)), sbytes};
    Op r{from, static_cast<uint8_t*>(rdata), rbytes};
    return run(std::span<Op>(&s, 1), std::span<Op>(&r, 1), timeout_ms);
  }
  Status exchange(std::span<const SendSpec> sends, std::span<const RecvSpec> recvs,
                  int64_t timeout_ms) override {
    std::vector<Op> s;
    std::vector<Op> r;
    for (const SendSpec& m : sends) {
      s.push_back({m.peer, const_cast<uint8_t*>(static_cast<const uint8_t*>(m.data)), m.bytes});
    }
    for (const RecvSpec& m : recvs) r.push_back({m.peer, static_cast<uint8_t*>(m.data), m.bytes});
    return run(s, r, timeout_ms);
  }

 private:
  std::string who() const { return "shm: rank " + std::to_string(rank()) + ": "; }

  Status check_peer(int peer) const {
    if (peer < 0 || peer >= size() || peer == rank()) {
      return Status::invalid_argument(who() + "no peer " + std::to_string(peer) +
                                      " in a group of " + std::to_string(size()));
    }
    if (broken_[static_cast<size_t>(peer)]) {
      return Status::unavailable(who() + "the link with rank " + std::to_string(peer) +
                                 " is broken after an earlier error");
    }
    return Status::ok();
  }

  // Moves as much of `op` as the ring allows right now; true if anything moved.
  bool step_send(Op& op) {
    shm::Ring& ring = out_[static_cast<size_t>(op.peer)];
    uint64_t space = ring.writable();
    bool moved = false;
    if (!op.header_done) {
      if (space < kHeaderBytes) return false;
      const uint64_t len = op.bytes;
      ring.write(&len, kHeaderBytes);
      space -= kHeaderBytes;
      op.header_done = true;
      moved = true;
    }
    const uint64_t n = std::min(space, op.bytes - op.done);
    if (n > 0) {
      ring.write(op.data + op.done, n);
      op.done += n;
      moved = true;
    }
    return moved;
  }

  Status step_recv(Op& op, bool* moved) {
    shm::Ring& ring = in_[static_cast<size_t>(op.peer)];
    uint64_t avail = ring.readable();
    if (!op.header_done) {
      if (avail < kHeaderBytes) return Status::ok();
      uint64_t len = 0;
      ring.read(&len, kHeaderBytes);
      avail -= kHeaderBytes;
      op.header_done = true;
      *moved = true;
      if (len != op.bytes) {
        broken_[static_cast<size_t>(op.peer)] = true;
        return Status::corrupt(who() + "expected a message of " + std::to_string(op.bytes) +
                               " bytes from rank " + std::to_string(op.peer) + ", got " +
                               std::to_string(len));
      }
    }
    const uint64_t n = std::min(avail, op.bytes - op.done);
    if (n > 0) {
      ring.read(op.data + op.done, n);
      op.done += n;
      *moved = true;
    }
    return Status::ok();
  }

  // Drives every send and receive until all are complete, the deadline passes, or a peer is
  // found gone.
  Status run(std::span<Op> sends, std::span<Op> recvs, int64_t timeout_ms) {
    for (const Op& op : sends) {
      COHORT_RETURN_IF_ERROR(check_peer(op.peer));
      std::string gone = seg_.peer_gone(op.peer, false);
      if (!gone.empty()) return Status::unavailable(who() + "cannot send: " + gone);
    }
    for (const Op& op : recvs) COHORT_RETURN_IF_ERROR(check_peer(op.peer));

    Deadline deadline(timeout_ms);
    using Clock = Deadline::Clock;
    Clock::time_point stuck_since{};
    Clock::time_point check_process_at{};
    bool armed = false;  // announced a wait on the doorbell; the next pass re-checks first
    uint32_t doorbell = 0;
    std::string gone;  // set once a peer we wait for is found gone; one last pass, then fail
    for (;;) {
      bool moved = false;
      bool all_done = true;
      for (Op& op : sends) {
        if (op.complete()) continue;
        if (step_send(op)) {
          moved = true;
          seg_.notify(op.peer);  // it may be sleeping on an empty ring
        }
        all_done &= op.complete();
      }
      for (Op& op : recvs) {
        if (op.complete()) continue;
        bool got = false;
        Status st = step_recv(op, &got);
        if (got) {
          moved = true;
          seg_.notify(op.peer);  // it may be sleeping on a full ring
        }
        if (!st.is_ok()) return disarm(fail(sends, recvs, std::move(st)), armed);
        all_done &= op.complete();
      }
      if (all_done) return disarm(Status::ok(), armed);
      if (moved) {
        stuck_since = {};
        if (armed) seg_.disarm_wait();
        armed = false;
        continue;
      }
      if (!gone.empty()) {
        return disarm(fail(sends, recvs, Status::unavailable(who() + gone)), armed);
      }

      const auto now = Clock::now();
      if (stuck_since == Clock::time_point{}) stuck_since = now;
      if (now - stuck_since < spin_ && !deadline.expired()) {
        cpu_relax();
        continue;
      }
      const bool check_process = now >= check_process_at;
      if (check_process) check_process_at = now + std::chrono::milliseconds(1);
      gone = first_gone(sends, recvs, check_process);
      if (!gone.empty()) continue;  // drain what the peer left before it went
      if (deadline.expired()) {
        return disarm(fail(sends, recvs,
                           Status::timeout(who() + "timed out after " + std::to_string(timeout_ms) +
                                           " ms waiting for " + describe_waits(sends, recvs))),
                      armed);
      }
      if (!armed) {
        doorbell = seg_.arm_wait();
        armed = true;
        continue;  // re-check the rings now that peers will ring the doorbell
      }
      // Sleep until a peer moves data, at most 1 ms at a time to look for dead peers.
      auto nap = std::chrono::microseconds(1000);
      if (!deadline.unlimited()) {
        nap = std::min(nap, std::chrono::duration_cast<std::chrono::microseconds>(deadline.at() -
                                                                                  Clock::now()) +
                                std::chrono::microseconds(1));
      }
      seg_.wait(doorbell, std::max(nap, std::chrono::microseconds(1)));
      armed = false;
    }
  }

  Status disarm(Status st, bool armed) {
    if (armed) seg_.disarm_wait();
    return st;
  }

  std::string first_gone(std::span<Op> sends, std::span<Op> recvs, bool check_process) const {
    for (std::span<Op> ops : {sends, recvs}) {
      for (const Op& op : ops) {
        if (op.complete()) continue;
        std::string gone = seg_.peer_gone(op.peer, check_process);
        if (!gone.empty()) return gone;
      }
    }
    return "";
  }

  static std::string describe_waits(std::span<Op> sends, std::span<Op> recvs) {
    std::string text;
    auto add = [&](const char* what, const Op& op) {
      if (op.complete()) return;
      text += (text.empty() ? "" : ", ") + std::string(what) + " rank " + std::to_string(op.peer) +
              " (" + std::to_string(op.done) + " of " + std::to_string(op.bytes) + " bytes)";
    };
    for (const Op& op : sends) add("send to", op);
    for (const Op& op : recvs) add("recv from", op);
    return text;
  }

  // A message cut off midway leaves its stream out of step: no later message on it can be
  // trusted.
  Status fail(std::span<Op> sends, std::span<Op> recvs, Status status) {
    for (std::span<Op> ops : {sends, recvs}) {
      for (const Op& op : ops) {
        if (op.started() && !op.complete()) broken_[static_cast<size_t>(op.peer)] = true;
      }
    }
    return status;
  }

  shm::Segment seg_;
  std::chrono::nanoseconds spin_;
  std::vector<shm::Ring> out_;  // out_[p]: my ring to rank p
  std::vector<shm::Ring> in_;   // in_[p]: rank p's ring to me
  std::vector<bool> broken_;
};

}  // namespace

Result<std::unique_ptr<Communicator>> make_shm_communicator(const std::string& name, int rank,
                                                            int size, int64_t timeout_ms,
                                                            const ShmOptions& options) {
  COHORT_ASSIGN_OR_RETURN(shm::Segment seg,
                          shm::Segment::join(name, rank, size, options.ring_bytes, timeout_ms));
  return std::unique_ptr<Communicator>(
      std::make_unique<ShmCommunicator>(std::move(seg), options.spin_us));
}

Result<std::unique_ptr<Communicator>> make_shm_communicator(const std::string& name, int rank,
                                                            int size, int64_t timeout_ms) {
  return make_shm_communicator(name, rank, size, timeout_ms, ShmOptions{});
}

}  // namespace cohort::comm
