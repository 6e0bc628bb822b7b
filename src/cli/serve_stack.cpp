#include "cli/serve_stack.h"

#include <cstdio>
#include <utility>

#include "api/api_routes.h"
#include "api/dashboard_routes.h"
#include "cli/model_sources.h"
#include "cli/served_model.h"
#include "runtime/deadline_engine.h"

namespace cohort::cli {
namespace {

// The loaded model the dashboard describes: the one used last.
std::shared_ptr<ServedModel> shown_model(const runtime::ModelRegistry& models) {
  std::shared_ptr<runtime::Engine> e = models.most_recent();
  if (auto limited = std::dynamic_pointer_cast<runtime::DeadlineEngine>(e)) e = limited->inner();
  return std::dynamic_pointer_cast<ServedModel>(e);
}

// The engine as requests reach it: under --request-timeout when one is set.
std::shared_ptr<runtime::Engine> with_time_limit(std::shared_ptr<runtime::Engine> e,
                                                 int64_t limit_ms) {
  if (limit_ms <= 0) return e;
  return std::make_shared<runtime::DeadlineEngine>(std::move(e), limit_ms);
}

// One model, opened now and kept loaded. Sets stack->session (and returns early on an MPI
// rank other than 0), stack->engine and stack->models.
Status open_one_model(const ServeOptions& cfg, ServeStack* stack) {
  COHORT_ASSIGN_OR_RETURN(stack->session, open_model_session(cfg.model, stack->events.get()));
  ModelSession& ms = *stack->session;
  if (ms.mpi_worker) return ms.mpi_served;
  stack->name = cfg.name;
  if (stack->name.empty()) {
    stack->name = cfg.model.model_path.substr(cfg.model.model_path.find_last_of('/') + 1);
  }
  stack->engine = make_generation_engine(ms, stack->name);
  stack->models = std::make_shared<runtime::ModelRegistry>(cfg.registry, runtime::ModelLoader{});
  // Not owned by the registry: the stack keeps the engine, and stops the server first.
  return stack->models->add_resident(with_time_limit(
      std::shared_ptr<runtime::Engine>(stack->engine.get(), [](runtime::Engine*) {}),
      cfg.request_timeout_ms));
}

// Several models, loaded when first asked for.
Status offer_models(const ServeOptions& cfg, ServeStack* stack) {
  if (!cfg.name.empty()) return Status::invalid_argument("serve: --name needs a single model");
  COHORT_ASSIGN_OR_RETURN(std::vector<runtime::ModelSource> sources,
                          find_model_sources(cfg.models_dir, cfg.more_models));
  runtime::ModelRegistryOptions ro = cfg.registry;
  if (!cfg.model.workers.empty() && ro.max_loaded != 1) {
    std::fprintf(stderr, "serve: --workers: one model loaded at a time (a worker serves one)\n");
    ro.max_loaded = 1;
  }
  ModelFlags flags = cfg.model;
  runtime::EventLog* events = stack->events.get();
  const int64_t limit_ms = cfg.request_timeout_ms;
  auto loader =
      [flags, events,
       limit_ms](const runtime::ModelSource& source) -> Result<std::shared_ptr<runtime::Engine>> {
    ModelFlags f = flags;
    f.model_path = source.path;
    std::fprintf(stderr, "serve: loading %s\n", source.name.c_str());
    COHORT_ASSIGN_OR_RETURN(std::shared_ptr<ServedModel> m,
                            ServedModel::open(f, source.name, events));
    return with_time_limit(std::move(m), limit_ms);
  };
  stack->models = std::make_shared<runtime::ModelRegistry>(ro, std::move(loader));
  for (runtime::ModelSource& s : sources) {
    COHORT_RETURN_IF_ERROR(stack->models->add_source(std::move(s)));
  }
  stack->name = std::to_string(stack->models->list().size()) + " models";
  return Status::ok();
}

}  // namespace

runtime::ClusterView ServeStack::cluster_view() const {
  if (session && session->cluster) return session->cluster->view();
  if (!session && models) {
    if (std::shared_ptr<ServedModel> m = shown_model(*models)) return m->cluster_view();
  }
  return {};
}

Result<std::unique_ptr<ServeStack>> start_serving(const ServeOptions& cfg) {
  auto stack = std::make_unique<ServeStack>();
  stack->events = std::make_unique<runtime::EventLog>();
  const bool one_model = cfg.models_dir.empty() && cfg.more_models.empty();
  if (one_model) {
    COHORT_RETURN_IF_ERROR(open_one_model(cfg, stack.get()));
    if (stack->session->mpi_worker) return stack;  // an MPI rank other than 0: its part is done
  } else {
    COHORT_RETURN_IF_ERROR(offer_models(cfg, stack.get()));
  }
  stack->requests = std::make_unique<api::RequestMetrics>();

  api::Router router;
  api::add_api_routes(router, stack->models,
                      [](const api::HttpRequest&) { return api::dashboard_page(); });
  const ServeStack* self = stack.get();
  router.add("GET", "/v1/cluster/status", [self](const api::HttpRequest&) {
    api::HttpResponse r;
    r.content_type = "text/plain; charset=utf-8";
    const ModelSession* ms = self->session.get();
    std::shared_ptr<ServedModel> shown;  // keeps the model's session alive while reading it
    if (ms == nullptr && (shown = shown_model(*self->models))) ms = &shown->session();
    r.body = ms == nullptr ? "no model loaded\n"
             : ms->cluster ? ms->cluster->status_report()
             : ms->mpi     ? ms->mpi->status_report()
                           : "one node: no workers\n";
    return r;
  });
  api::LiveSources live;
  live.model_name = stack->name;
  if (stack->session) live.model_summary = stack->session->hparams.summary();
  if (!cfg.model_note.empty()) live.model_summary = cfg.model_note + "; " + live.model_summary;
  live.cluster = [self] { return self->cluster_view(); };
  live.events = stack->events.get();
  runtime::GenerationEngine* engine = stack->engine.get();
  runtime::ModelRegistry* models = stack->models.get();
  live.stats = [engine, models]() -> runtime::EngineStats {
    if (engine) return engine->stats();
    std::shared_ptr<ServedModel> m = shown_model(*models);
    return m ? m->stats() : runtime::EngineStats{};
  };
  live.requests = stack->requests.get();
  api::add_dashboard_routes(router, std::move(live));
  api::RequestMetrics* requests = stack->requests.get();
  router.set_observer([requests](const api::HttpRequest& req, const api::HttpResponse& res) {
    requests->record(req, res);
  });

  api::ServerOptions so;
  so.host = cfg.host;
  so.port = static_cast<uint16_t>(cfg.port);
  so.api_key = cfg.api_key;
  COHORT_ASSIGN_OR_RETURN(stack->server, api::HttpServer::start(so, std::move(router)));
  return stack;
}

}  // namespace cohort::cli
