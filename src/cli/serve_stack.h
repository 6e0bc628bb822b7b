// A running head: the models it offers (runtime/model_registry.h), the generation engines of
// those loaded, and the HTTP server with every dialect, /v1/cluster/status, the dashboard,
// /v1/cluster and /metrics. `cohort serve` runs one until a signal; `cohort demo` runs one
// in-process next to its local workers and talks to it.
//
// One model (one -m, no --models-dir) is opened at start and stays loaded: session and
// engine are set. Several (--models-dir, or -m more than once) load on demand as requests
// name them (cli/served_model.h), at most options.registry.max_loaded at once (forced to 1
// with --workers: a worker serves one head session at a time), unloading the least recently
// used idle one when there is no room or memory is short.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/http_server.h"
#include "api/request_metrics.h"
#include "cli/model_session.h"
#include "core/status.h"
#include "runtime/event_log.h"
#include "runtime/generation_engine.h"
#include "runtime/model_registry.h"

namespace cohort::cli {

struct ServeOptions {
  ModelFlags model;  // model.model_path: the one model (single-model serve)
  // Several models: every *.gguf in models_dir, plus these files. Named by file name.
  std::string models_dir;
  std::vector<std::string> more_models;
  runtime::ModelRegistryOptions registry;
  // A completion still generating after this long fails with a timeout (504, or an error
  // event mid-stream); 0: no limit (runtime/deadline_engine.h).
  int64_t request_timeout_ms = 0;
  std::string host = "127.0.0.1";
  int port = 52415;  // 0: any free port (ServeStack::port())
  std::string api_key;
  std::string name;        // the model id clients use (default: the file name; one model only)
  std::string model_note;  // shown next to the model on the dashboard, e.g. "random weights"
};

// Members are destroyed in reverse order: the server stops before the registry, the engine
// and the session it calls into.
struct ServeStack {
  std::string name;  // the one model's id, or "N models"
  std::unique_ptr<runtime::EventLog> events;
  std::unique_ptr<ModelSession> session;              // one model only
  std::unique_ptr<runtime::GenerationEngine> engine;  // one model only; null on an MPI rank != 0
  std::shared_ptr<runtime::ModelRegistry> models;
  std::unique_ptr<api::RequestMetrics> requests;
  std::unique_ptr<api::HttpServer> server;  // null on an MPI rank other than 0

  uint16_t port() const { return server ? server->port() : 0; }
  // The cluster as the dashboard shows it (clustered = false on one node); with several
  // models, that of the model used last.
  runtime::ClusterView cluster_view() const;
};

// Opens the model (starting the cluster when asked) and starts serving. On an MPI rank
// other than 0 it returns once that rank has served its steps (session->mpi_worker set,
// no server). Errors are ready to print.
Result<std::unique_ptr<ServeStack>> start_serving(const ServeOptions& options);

}  // namespace cohort::cli
