// Where the dashboard's JSON and /metrics read the live state of a serving head: the model,
// the cluster (nodes, links, placement), recent cluster events, the engine's counters and
// the HTTP request counts. Every function is called on handler threads, concurrently.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/request_metrics.h"
#include "runtime/cluster_view.h"
#include "runtime/event_log.h"
#include "runtime/serving_stats.h"

namespace cohort::api {

struct LiveSources {
  std::string model_name;
  std::string model_summary;                      // e.g. "llama 8 layers, 8 heads ..."
  std::function<runtime::ClusterView()> cluster;  // unset: one node
  const runtime::EventLog* events = nullptr;      // may be null
  std::function<runtime::EngineStats()> stats;    // required
  const RequestMetrics* requests = nullptr;       // may be null
};

}  // namespace cohort::api
