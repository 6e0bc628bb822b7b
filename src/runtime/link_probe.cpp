#include "runtime/link_probe.h"

#include <algorithm>
#include <vector>

#include "cluster/protocol.h"
#include "core/clock.h"
#include "net/frame.h"
#include "net/handshake.h"

namespace cohort::runtime {
namespace {

Status exchange(net::Socket& s, uint16_t type, const std::vector<uint8_t>& payload, uint16_t expect,
                int64_t timeout_ms) {
  COHORT_RETURN_IF_ERROR(net::write_frame(s, type, payload.data(), payload.size(), timeout_ms));
  COHORT_ASSIGN_OR_RETURN(net::Frame f, net::read_frame(s, 4096, timeout_ms));
  if (f.type != expect) {
    return Status::corrupt("link probe: " + s.peer() + " answered message " +
                           std::to_string(f.type) + ", expected " + std::to_string(expect));
  }
  return Status::ok();
}

}  // namespace

Result<LinkReport> probe_link(net::Socket& s, int64_t timeout_ms) {
  LinkReport r;
  std::vector<double> rtts;
  const std::vector<uint8_t> ping(64, 0x5a);
  for (int i = 0; i < 16; ++i) {
    const double t0 = now_s();
    COHORT_RETURN_IF_ERROR(exchange(s, cluster::kMsgPing, ping, cluster::kMsgPong, timeout_ms));
    rtts.push_back((now_s() - t0) * 1e6);
  }
  std::sort(rtts.begin(), rtts.end());
  r.rtt_us = rtts[rtts.size() / 2];
  const std::vector<uint8_t> bulk(4 << 20, 0xa5);
  const double t0 = now_s();
  COHORT_RETURN_IF_ERROR(
      exchange(s, cluster::kMsgProbeData, bulk, cluster::kMsgProbeAck, timeout_ms));
  r.bandwidth_bytes_per_s = bulk.size() / std::max(1e-6, now_s() - t0 - r.rtt_us * 1e-6);
  return r;
}

Result<LinkReport> probe_peer(const net::HostPort& peer, const net::ClusterKey& key,
                              const std::string& my_name, int64_t timeout_ms) {
  COHORT_ASSIGN_OR_RETURN(net::Socket s, net::Socket::connect(peer, timeout_ms));
  net::PeerInfo mine;
  mine.name = my_name;
  mine.role = "probe";
  COHORT_ASSIGN_OR_RETURN(net::PeerInfo them, net::handshake(s, key, mine, timeout_ms));
  COHORT_ASSIGN_OR_RETURN(LinkReport r, probe_link(s, timeout_ms));
  r.node = them.name;
  return r;
}

}  // namespace cohort::runtime
