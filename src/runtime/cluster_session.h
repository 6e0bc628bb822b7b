// The head's side of a cluster: find workers (static list or multicast discovery), prove the
// key, measure nodes and links, plan the placement, have every worker load its shard, join
// the data plane, and expose the whole cluster as one Stepper. Destroying the session stops
// the workers' step loops and closes their control connections; they wait for a new head.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/planner.h"
#include "cluster/protocol.h"
#include "comm/counting_communicator.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "format/gguf.h"
#include "net/address.h"
#include "net/cluster_key.h"
#include "runtime/cluster_view.h"
#include "runtime/event_log.h"
#include "runtime/link_probe.h"
#include "runtime/stepper.h"

namespace cohort::runtime {

struct ClusterOptions {
  std::string model_path;
  std::vector<net::HostPort> workers;  // empty: discover by multicast
  int64_t discover_ms = 1500;
  net::HostPort multicast_group{"239.255.77.77", 52416};
  cluster::PlanOptions plan;
  std::string transport = "tcp";  // tcp | shm
  net::ClusterKey key;
  int64_t link_delay_us = 0;
  int threads = 0;
  int64_t n_ctx = 2048;
  int64_t max_batch = 64;
  int64_t n_slots = 1;  // sequence slots (one KV cache each) on every rank
  DType kv_type = DType::kF16;
  std::string bind_host = "127.0.0.1";  // the head's data-plane address
  std::string name = "head";
  // Ship each worker its shard even when it has the same model file (default: only to
  // workers that lack it; shipped shards are cached on the worker by content).
  bool ship_always = false;
  // Workers never to use (host:port as in `workers`), e.g. nodes found slow before; they are
  // left out of discovery too.
  std::vector<net::HostPort> excluded;
  // Where refused keys and slow links are reported (may be null; must outlive the session).
  EventLog* events = nullptr;
};

// A worker found persistently slower than the placement assumed (runtime/slow_node_detector.h).
struct SlowNode {
  std::string name;
  net::HostPort address;  // its control address, as ClusterOptions::workers names it
  std::string why;
};

class ClusterSession {
 public:
  // file is the head's open model (it must outlive the session).
  static Result<std::unique_ptr<ClusterSession>> start(const ClusterOptions& options,
                                                       const format::GgufFile& file);
  ~ClusterSession();

  Stepper& stepper();
  const cluster::Plan& plan() const;
  // What the head has communicated since the session started (its world and stage groups:
  // operations, payload bytes, time inside them); subtract snapshots to measure a span.
  comm::CommTotals comm_totals() const;
  // Why a worker was declared lost (runtime/heartbeat_monitor.h): its control connection
  // failed or its heartbeats stopped. "" while every worker is heard. The head's data-plane
  // links are broken at that moment, so a step waiting on them fails at once. Any thread.
  std::string lost() const;
  // The first worker found slow while serving (logged as a "slow_node" event then), if any:
  // placing the model again without it should pay. Any thread.
  std::optional<SlowNode> slow_node() const;
  // Nodes, links, placement and why: what `cohort cluster status` prints.
  std::string status_report() const;
  // The same as values, for dashboards.
  ClusterView view() const;

  struct Impl;

 private:
  explicit ClusterSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cohort::runtime
