// A running head: the model session (this node or a cluster), the generation engine, and
// the HTTP server with every dialect, /v1/cluster/status, the dashboard, /v1/cluster and
// /metrics. `cohort serve` runs one until a signal; `cohort demo` runs one in-process next
// to its local workers and talks to it.
#pragma once

#include <memory>
#include <string>

#include "api/http_server.h"
#include "api/request_metrics.h"
#include "cli/model_session.h"
#include "core/status.h"
#include "runtime/event_log.h"
#include "runtime/generation_engine.h"

namespace cohort::cli {

struct ServeOptions {
  ModelFlags model;
  std::string host = "127.0.0.1";
  int port = 52415;  // 0: any free port (ServeStack::port())
  std::string api_key;
  std::string name;        // the model id clients use (default: the file name)
  std::string model_note;  // shown next to the model on the dashboard, e.g. "random weights"
};

// Members are destroyed in reverse order: the server stops before the engine and the
// session it calls into.
struct ServeStack {
  std::string name;
  std::unique_ptr<runtime::EventLog> events;
  std::unique_ptr<ModelSession> session;
  std::unique_ptr<runtime::GenerationEngine> engine;  // null on an MPI rank other than 0
  std::unique_ptr<api::RequestMetrics> requests;
  std::unique_ptr<api::HttpServer> server;  // null on an MPI rank other than 0

  uint16_t port() const { return server ? server->port() : 0; }
  // The cluster as the dashboard shows it (clustered = false on one node).
  runtime::ClusterView cluster_view() const;
};

// Opens the model (starting the cluster when asked) and starts serving. On an MPI rank
// other than 0 it returns once that rank has served its steps (session->mpi_worker set,
// no server). Errors are ready to print.
Result<std::unique_ptr<ServeStack>> start_serving(const ServeOptions& options);

}  // namespace cohort::cli
