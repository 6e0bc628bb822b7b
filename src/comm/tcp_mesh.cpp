// Phase 2 of forming a tcp mesh: connect, handshake and HELLO with every other rank.
#include <chrono>
#include <string_view>
#include <thread>

#include "comm/deadline.h"
#include "comm/tcp_communicator.h"
#include "comm/tcp_errors.h"
#include "core/log.h"
#include "net/frame.h"
#include "net/handshake.h"
#include "net/wire.h"

namespace cohort::comm {
namespace {

constexpr size_t kMeshHelloBytes = 16;
constexpr int kMaxMeshRanks = 4096;

struct MeshHello {
  uint32_t rank = 0;
  uint32_t size = 0;
};

Status write_hello(net::Socket& s, int rank, int size, const Deadline& deadline) {
  net::WireWriter w;
  w.u32(kMeshHelloMagic).u32(kMeshVersion).u32(static_cast<uint32_t>(rank));
  w.u32(static_cast<uint32_t>(size));
  return net::write_frame(s, kFrameTypeMeshHello, w.data().data(), w.size(),
                          deadline.remaining_ms());
}

Result<MeshHello> read_hello(net::Socket& s, const Deadline& deadline) {
  COHORT_ASSIGN_OR_RETURN(net::Frame f,
                          net::read_frame(s, kMeshHelloBytes, deadline.remaining_ms()));
  if (f.type != kFrameTypeMeshHello) {
    return Status::corrupt("expected a mesh HELLO, got frame type " + std::to_string(f.type));
  }
  net::WireReader r(f.payload);
  uint32_t magic = 0;
  uint32_t version = 0;
  MeshHello h;
  COHORT_RETURN_IF_ERROR(r.u32(&magic));
  COHORT_RETURN_IF_ERROR(r.u32(&version));
  COHORT_RETURN_IF_ERROR(r.u32(&h.rank));
  COHORT_RETURN_IF_ERROR(r.u32(&h.size));
  COHORT_RETURN_IF_ERROR(r.expect_end());
  if (magic != kMeshHelloMagic) return Status::corrupt("bad mesh HELLO magic");
  if (version != kMeshVersion) {
    return Status::unsupported("mesh version " + std::to_string(version) + ", this node speaks " +
                               std::to_string(kMeshVersion));
  }
  return h;
}

class MeshBuilder {
 public:
  MeshBuilder(int rank, const std::vector<net::HostPort>& endpoints, const TcpOptions& opts)
      : rank_(rank),
        size_(static_cast<int>(endpoints.size())),
        endpoints_(endpoints),
        opts_(opts),
        deadline_(opts.connect_timeout_ms),
        who_("tcp: rank " + std::to_string(rank) + ": ") {
    mine_.name = opts.name;
    mine_.role = "mesh";
  }

  Result<std::unique_ptr<Communicator>> build(net::Listener& listener) {
    std::vector<std::unique_ptr<net::Socket>> peers(static_cast<size_t>(size_));
    for (int j = 0; j < rank_; ++j) {
      COHORT_ASSIGN_OR_RETURN(net::Socket s, connect_to(j));
      peers[static_cast<size_t>(j)] = std::make_unique<net::Socket>(std::move(s));
    }
    int waiting = size_ - 1 - rank_;
    std::string last_refusal;
    while (waiting > 0) {
      Result<net::Socket> accepted = listener.accept(deadline_.remaining_ms());
      if (!accepted.is_ok()) {
        if (accepted.status().code() != StatusCode::kTimeout) {
          return Status(
              accepted.status().code(),
              who_ + "accept: " + std::string(strip_tcp_prefix(accepted.status().message())));
        }
        std::string missing;
        for (int j = rank_ + 1; j < size_; ++j) {
          if (!peers[static_cast<size_t>(j)]) {
            missing += (missing.empty() ? "" : ", ") + std::to_string(j);
          }
        }
        return Status::timeout(who_ + "rank(s) " + missing + " did not join the mesh within " +
                               std::to_string(opts_.connect_timeout_ms) + " ms" +
                               (last_refusal.empty() ? "" : "; refused " + last_refusal));
      }
      net::Socket s = std::move(accepted).value();
      const std::string from = s.peer();
      Result<net::PeerInfo> info = net::handshake(s, opts_.key, mine_, deadline_.remaining_ms());
      if (!info.is_ok()) {
        // A stranger, or a node with another key: refuse it and keep waiting for our peers.
        last_refusal = from + ": " + info.status().message();
        COHORT_LOG_WARN("%srefused a connection from %s", who_.c_str(), last_refusal.c_str());
        continue;
      }
      COHORT_RETURN_IF_ERROR(prefix(write_hello(s, rank_, size_, deadline_), "HELLO to " + from));
      Result<MeshHello> h = read_hello(s, deadline_);
      if (!h.is_ok()) return prefix(h.status(), "HELLO from " + from);
      const int their = static_cast<int>(h->rank);
      if (h->size != static_cast<uint32_t>(size_) || h->rank >= h->size || their <= rank_ ||
          peers[static_cast<size_t>(their)]) {
        return Status::invalid_argument(
            who_ + "peer " + from + " announced rank " + std::to_string(h->rank) + " of " +
            std::to_string(h->size) + ", expected one of the ranks above " + std::to_string(rank_) +
            " not yet connected, of " + std::to_string(size_));
      }
      peers[static_cast<size_t>(their)] = std::make_unique<net::Socket>(std::move(s));
      --waiting;
    }
    return make_tcp_communicator(rank_, std::move(peers), opts_.busy_poll);
  }

 private:
  Status prefix(const Status& st, const std::string& what) const {
    if (st.is_ok()) return st;
    return Status(st.code(), who_ + what + ": " + std::string(strip_tcp_prefix(st.message())));
  }

  // Connects to rank j, retrying while its listener refuses (it may not be up yet).
  Result<net::Socket> connect_to(int j) {
    const net::HostPort& at = endpoints_[static_cast<size_t>(j)];
    const std::string where = "rank " + std::to_string(j) + " at " + at.to_string();
    Status last;
    for (;;) {
      if (deadline_.expired()) {
        return Status::timeout(who_ + "could not connect to " + where + " within " +
                               std::to_string(opts_.connect_timeout_ms) +
                               " ms: " + std::string(strip_tcp_prefix(last.message())));
      }
      Result<net::Socket> s = net::Socket::connect(at, deadline_.remaining_ms());
      if (s.is_ok()) {
        net::Socket sock = std::move(s).value();
        Result<net::PeerInfo> info =
            net::handshake(sock, opts_.key, mine_, deadline_.remaining_ms());
        if (!info.is_ok()) return prefix(info.status(), "handshake with " + where + " failed");
        COHORT_RETURN_IF_ERROR(
            prefix(write_hello(sock, rank_, size_, deadline_), "HELLO to " + where));
        Result<MeshHello> h = read_hello(sock, deadline_);
        if (!h.is_ok()) return prefix(h.status(), "HELLO from " + where);
        if (h->rank != static_cast<uint32_t>(j) || h->size != static_cast<uint32_t>(size_)) {
          return Status::invalid_argument(who_ + where + " announced rank " +
                                          std::to_string(h->rank) + " of " +
                                          std::to_string(h->size) + ", expected rank " +
                                          std::to_string(j) + " of " + std::to_string(size_));
        }
        return sock;
      }
      last = s.status();
      if (last.code() != StatusCode::kUnavailable && last.code() != StatusCode::kTimeout) {
        return prefix(last, "connect to " + where);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  int rank_;
  int size_;
  const std::vector<net::HostPort>& endpoints_;
  const TcpOptions& opts_;
  Deadline deadline_;
  std::string who_;
  net::PeerInfo mine_;
};

}  // namespace

Result<TcpMeshListener> TcpMeshListener::listen(const net::HostPort& at) {
  Result<net::Listener> l = net::Listener::bind(at);
  if (!l.is_ok()) {
    return Status(l.status().code(), "tcp: listen on " + at.to_string() + ": " +
                                         std::string(strip_tcp_prefix(l.status().message())));
  }
  return TcpMeshListener(std::move(l).value());
}

uint16_t TcpMeshListener::port() const { return listener_.port(); }

Result<std::unique_ptr<Communicator>> TcpMeshListener::connect(
    int rank, const std::vector<net::HostPort>& endpoints, const TcpOptions& opts) && {
  const int size = static_cast<int>(endpoints.size());
  if (endpoints.empty() || endpoints.size() > static_cast<size_t>(kMaxMeshRanks) || rank < 0 ||
      rank >= size) {
    return Status::invalid_argument("tcp: rank " + std::to_string(rank) + " with " +
                                    std::to_string(endpoints.size()) + " endpoints");
  }
  MeshBuilder builder(rank, endpoints, opts);
  Result<std::unique_ptr<Communicator>> mesh = builder.build(listener_);
  listener_.close();
  return mesh;
}

}  // namespace cohort::comm
