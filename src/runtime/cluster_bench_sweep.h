// The grid of `cohort bench cluster`: one model on a cluster of N nodes on this machine (the
// head in this process, N-1 `cohort worker` processes started once, runtime/local_workers.h),
// measured in every asked placement mode, transport and injected one-way link latency.
//
// Each configuration opens its own ClusterSession (placement as the mode asks, even shares,
// the delay decorator for the latency) and measures it (runtime/cluster_bench.h). A mode
// the planner cannot do with N nodes, or that would repeat another mode's placement (hybrid
// on fewer than 4 nodes is a single tensor stage), and a configuration that fails to start
// are kept as rows with the reason instead of a measurement.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "format/gguf.h"
#include "runtime/cluster_bench.h"

namespace cohort::runtime {

struct ClusterSweepOptions {
  std::string model_path;
  int nodes = 2;       // head included, >= 2
  int threads = 1;     // compute threads of every node
  int64_t batch = 64;  // prompt tokens per step
  std::vector<std::string> modes = {"pipeline", "tensor", "hybrid"};
  std::vector<std::string> transports = {"tcp", "shm"};
  std::vector<int64_t> latencies_us = {0, 3, 30, 100, 300, 1000};
  bool encrypt = false;  // every cluster link sealed (--encrypt), to measure what it costs
  ClusterBenchOptions bench;
};

struct ClusterBenchRow {
  std::string mode;
  std::string transport;
  int nodes = 0;
  int64_t link_latency_us = 0;
  std::string placement;        // "2 stages x 1 rank", ...
  int64_t syncs_per_token = 0;  // critical_path_syncs of the plan
  double compute_share = 1;
  ClusterMeasurement m;
  std::string skipped;  // set: not measured, and why
};

// Checks the options (kInvalidArgument with the reason), starts the workers and runs every
// configuration in the order mode, transport, latency. on_row is called as each row is done
// (progress). file: the head's open model at model_path.
Result<std::vector<ClusterBenchRow>> run_cluster_sweep(
    const ClusterSweepOptions& options, const format::GgufFile& file,
    const std::function<void(const ClusterBenchRow&)>& on_row);

}  // namespace cohort::runtime
