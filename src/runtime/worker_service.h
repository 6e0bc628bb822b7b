// `cohort worker`: a compute node. It listens for heads on its control port, advertises
// itself by UDP multicast, proves the cluster key (and refuses peers that cannot), answers
// node-info and link probes, loads its shard when told, joins the data plane and runs its
// part of every step until the head stops it or goes away; then it waits for the next head.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "core/status.h"
#include "net/address.h"
#include "net/cluster_key.h"

namespace cohort::runtime {

struct WorkerOptions {
  net::HostPort listen{"127.0.0.1", 52417};
  net::ClusterKey key;
  std::string name = "worker";
  int threads = 0;       // compute threads (0: all cores)
  bool announce = true;  // by UDP multicast
  // Heads' discovery addresses to announce to by unicast (where multicast is blocked).
  std::vector<net::HostPort> peers;
  net::HostPort multicast_group{"239.255.77.77", 52416};
  int64_t announce_interval_ms = 500;
  std::string cache_dir;  // shards shipped by heads (empty: ShardCache::default_dir())
  // Test hook: sleep this long in every step this node runs, so it looks slow to the head
  // (which then places the model without it: runtime/slow_node_detector.h).
  int64_t inject_delay_ms = 0;
};

// Runs until stop becomes true (checked about every 200 ms while idle). Returns an error
// only when the control port cannot be opened; everything a head does wrong is logged and
// survived.
Status run_worker(const WorkerOptions& options, const std::atomic<bool>& stop);

}  // namespace cohort::runtime
