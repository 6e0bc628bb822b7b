// The tcp transport: a full mesh of persistent TCP connections, one per pair of ranks, for
// ranks on any LAN.
//
// Forming the mesh takes two phases, so every rank can listen on a free port and tell it to
// the head before anyone connects:
//   1. TcpMeshListener::listen(at) on every rank; port() is reported to the head.
//   2. std::move(listener).connect(rank, endpoints, options) on every rank, endpoints[i]
//      being rank i's host:port. Rank r connects to every lower rank (retrying refused
//      connects until connect_timeout_ms) and accepts from every higher one. Each connection
//      runs net::handshake (both ends prove the cluster key) and then a mesh HELLO frame
//      {version, rank, size} each way, checked against what each end expects. An incoming
//      connection that fails the handshake (a stranger, a wrong key) is refused and logged,
//      and the rank keeps waiting for its real peers; if they do not all arrive within
//      connect_timeout_ms the result is kTimeout naming the missing ranks and the last
//      refusal. connect_timeout_ms bounds the whole of phase 2.
//
// Data: every message is one frame (kFrameTypeMeshData; messages above net::kMaxFrameBytes
// are split into several) written with one gather write and read straight into the
// caller's buffer. Every received frame's type and length are checked against what the
// receiver expects: kCorrupt otherwise, and the link is then broken (shut down; later calls
// on it give kUnavailable). A peer that closed or vanished gives kUnavailable; a timeout
// before any byte of a message arrived leaves the link usable, one in the middle breaks it.
//
// With TcpOptions.key.encrypt_traffic every link is sealed by its handshake (net/
// secure_channel.h): each frame is encrypted and authenticated, a frame that fails is
// kCorrupt and breaks the link like any other bad frame. All ranks must agree on it: a rank
// that differs is refused at the handshake.
//
// Collectives come from P2PCommunicator; send_recv overlaps the two directions (a helper
// thread writes messages larger than kOneStepMaxBytes while the caller reads), so large
// all-reduces cannot deadlock on full socket buffers. busy_poll makes reads spin briefly
// before sleeping (lowest latency, one busy core per waiting rank).
//
// Thread-safety: as Communicator (one driving thread). name() is "tcp".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "core/status.h"
#include "net/address.h"
#include "net/cluster_key.h"
#include "net/socket.h"

namespace cohort::comm {

// Frame types of the mesh; stable, never renumbered.
inline constexpr uint16_t kFrameTypeMeshHello = 0x0C01;
inline constexpr uint16_t kFrameTypeMeshData = 0x0C02;
inline constexpr uint32_t kMeshHelloMagic = 0x48534D43;  // "CMSH" on the wire
inline constexpr uint32_t kMeshVersion = 1;

struct TcpOptions {
  net::ClusterKey key;
  int64_t connect_timeout_ms = 10000;
  bool busy_poll = false;
  std::string name = "node";  // this node's name in the handshake
};

// Phase 1 of forming a mesh (above). Move-only.
class TcpMeshListener {
 public:
  // Binds `at` (port 0 = any free port).
  static Result<TcpMeshListener> listen(const net::HostPort& at);
  uint16_t port() const;

  // Phase 2: builds the mesh (above) and consumes the listener, which is closed afterwards.
  // Errors: kInvalidArgument for a bad rank or endpoint list or a peer that announces
  // another rank/size, kTimeout when peers do not arrive in time, the handshake's error
  // (kUnavailable "auth: ...", kUnsupported for another protocol version) for a connection
  // this rank initiated.
  Result<std::unique_ptr<Communicator>> connect(int rank,
                                                const std::vector<net::HostPort>& endpoints,
                                                const TcpOptions& opts) &&;

 private:
  explicit TcpMeshListener(net::Listener listener) : listener_(std::move(listener)) {}
  net::Listener listener_;
};

// The communicator over already-connected, already-verified sockets: peers[i] is the link to
// rank i (null at i == rank). For tests and for callers that build their own mesh.
std::unique_ptr<Communicator> make_tcp_communicator(int rank,
                                                    std::vector<std::unique_ptr<net::Socket>> peers,
                                                    bool busy_poll);

}  // namespace cohort::comm
