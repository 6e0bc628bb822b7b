#include "comm/tcp_communicator.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string_view>
#include <thread>

#include "comm/collectives.h"
#include "comm/deadline.h"
#include "comm/tcp_errors.h"
#include "net/frame.h"

namespace cohort::comm {
namespace {

std::string hex16(uint16_t v) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "0x%04x", v);
  return buf;
}

class TcpCommunicator final : public P2PCommunicator {
 public:
  TcpCommunicator(int rank, std::vector<std::unique_ptr<net::Socket>> peers, bool busy_poll)
      : rank_(rank), peers_(std::move(peers)), broken_(peers_.size()) {
    for (auto& s : peers_) {
      if (s) s->set_busy_poll(busy_poll);
    }
  }
  ~TcpCommunicator() override {
    for (auto& s : peers_) {
      if (s) s->shutdown();
    }
  }

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(peers_.size()); }
  std::string name() const override { return "tcp"; }

  Status send(int peer, const void* data, size_t bytes, int64_t timeout_ms) override {
    COHORT_RETURN_IF_ERROR(check_peer(peer));
    Deadline deadline(timeout_ms);
    net::Socket& s = *peers_[static_cast<size_t>(peer)];
    const auto* p = static_cast<const uint8_t*>(data);
    size_t left = bytes;
    do {  // an empty message is one empty frame
      const size_t n = std::min<size_t>(left, net::kMaxFrameBytes);
      Status st = net::write_frame(s, kFrameTypeMeshData, p, n, deadline.remaining_ms());
      // A write cut off by a timeout may have sent a prefix: the stream is out of step.
      if (!st.is_ok()) return break_link(peer, "send to", st);
      p += n;
      left -= n;
    } while (left > 0);
    return Status::ok();
  }

  Status recv(int peer, void* data, size_t bytes, int64_t timeout_ms) override {
    COHORT_RETURN_IF_ERROR(check_peer(peer));
    Deadline deadline(timeout_ms);
    auto* p = static_cast<uint8_t*>(data);
    size_t left = bytes;
    bool first = true;
    do {
      const size_t n = std::min<size_t>(left, net::kMaxFrameBytes);
      COHORT_RETURN_IF_ERROR(read_piece(peer, p, n, bytes, first, deadline));
      first = false;
      p += n;
      left -= n;
    } while (left > 0);
    return Status::ok();
  }

  // Messages up to kOneStepMaxBytes fit in the socket buffers, so they are written before
  // reading; larger ones are written by a helper thread while this one reads.
  Status send_recv(int to, const void* sdata, size_t sbytes, int from, void* rdata, size_t rbytes,
                   int64_t timeout_ms) override {
    Deadline deadline(timeout_ms);
    if (sbytes <= kOneStepMaxBytes) {
      COHORT_RETURN_IF_ERROR(send(to, sdata, sbytes, deadline.remaining_ms()));
      return recv(from, rdata, rbytes, deadline.remaining_ms());
    }
    COHORT_RETURN_IF_ERROR(check_peer(to));
    COHORT_RETURN_IF_ERROR(check_peer(from));
    Status send_status;
    std::thread writer([&] { send_status = send(to, sdata, sbytes, deadline.remaining_ms()); });
    Status recv_status = recv(from, rdata, rbytes, deadline.remaining_ms());
    if (!recv_status.is_ok() && to == from) {
      // The message cannot complete: break the link to wake the writer instead of waiting
      // out its timeout.
      (void)break_link(to, "send to", recv_status);
    }
    writer.join();
    if (!recv_status.is_ok()) return recv_status;
    return send_status;
  }

 private:
  std::string who() const { return "tcp: rank " + std::to_string(rank_) + ": "; }

  Status check_peer(int peer) {
    if (peer < 0 || peer >= size() || peer == rank_) {
      return Status::invalid_argument(who() + "no peer " + std::to_string(peer) +
                                      " in a group of " + std::to_string(size()));
    }
    std::lock_guard<std::mutex> lock(mu_);
    const std::string& reason = broken_[static_cast<size_t>(peer)];
    if (!reason.empty()) {
      return Status::unavailable(who() + "the link with rank " + std::to_string(peer) +
                                 " is broken after an earlier error: " + reason);
    }
    return Status::ok();
  }

  // Wraps a failure on the link with `peer`, marks the link broken and shuts it down.
  Status break_link(int peer, const char* what, const Status& st) {
    std::string msg = who() + what + " rank " + std::to_string(peer) + ": ";
    msg += strip_tcp_prefix(st.message());
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::string& reason = broken_[static_cast<size_t>(peer)];
      if (reason.empty()) reason = st.message();
    }
    peers_[static_cast<size_t>(peer)]->shutdown();
    return Status(st.code(), std::move(msg));
  }

  // Reads one frame of exactly n payload bytes into dst. `first`: no byte of this message has
  // been read yet, so a timeout before the frame starts leaves the link usable.
  Status read_piece(int peer, uint8_t* dst, size_t n, size_t message_bytes, bool first,
                    const Deadline& deadline) {
    net::Socket& s = *peers_[static_cast<size_t>(peer)];
    size_t got = 0;
    Result<net::FrameHeader> h =
        net::read_frame_header(s, net::kMaxFrameBytes, deadline.remaining_ms(), &got);
    if (!h.is_ok()) {
      if (h.status().code() == StatusCode::kTimeout && got == 0 && first) {
        return Status::timeout(who() + "recv from rank " + std::to_string(peer) + " of " +
                               std::to_string(message_bytes) + " bytes timed out");
      }
      return break_link(peer, "recv from", h.status());
    }
    if (h->type != kFrameTypeMeshData) {
      return break_link(peer, "recv from",
                        Status::corrupt("unexpected frame type " + hex16(h->type)));
    }
    if (h->payload_bytes != n) {
      return break_link(peer, "recv from",
                        Status::corrupt("expected a message of " + std::to_string(n) +
                                        " bytes, got " + std::to_string(h->payload_bytes)));
    }
    // On a sealed link this also authenticates the frame (an empty one too).
    Status st = net::read_frame_payload(s, *h, dst, deadline.remaining_ms());
    if (!st.is_ok()) return break_link(peer, "recv from", st);
    return Status::ok();
  }

  int rank_;
  std::vector<std::unique_ptr<net::Socket>> peers_;  // peers_[rank_] is null
  std::mutex mu_;                                    // guards broken_ (send_recv's writer)
  std::vector<std::string> broken_;                  // why a link is unusable; empty if fine
};

}  // namespace

std::unique_ptr<Communicator> make_tcp_communicator(int rank,
                                                    std::vector<std::unique_ptr<net::Socket>> peers,
                                                    bool busy_poll) {
  return std::make_unique<TcpCommunicator>(rank, std::move(peers), busy_poll);
}

}  // namespace cohort::comm
