// Measuring a link over an authenticated control connection: the median round trip of 16
// small pings and the rate of one 4 MiB transfer. The far end answers kMsgPing with
// kMsgPong and kMsgProbeData with kMsgProbeAck (every worker does, for heads and for other
// workers' probes alike).
#pragma once

#include <string>

#include "core/status.h"
#include "net/address.h"
#include "net/cluster_key.h"
#include "net/socket.h"

namespace cohort::runtime {

struct LinkReport {
  std::string node;  // the far end's name
  double rtt_us = 0;
  double bandwidth_bytes_per_s = 0;
};

// Measures the link to the peer on s (node is left empty).
Result<LinkReport> probe_link(net::Socket& s, int64_t timeout_ms);

// Connects to a worker's control port, proves the key as a "probe" peer, measures and
// disconnects: how one worker measures its link to another.
Result<LinkReport> probe_peer(const net::HostPort& peer, const net::ClusterKey& key,
                              const std::string& my_name, int64_t timeout_ms);

}  // namespace cohort::runtime
