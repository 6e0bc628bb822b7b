#include "cli/serve_stack.h"

#include <cstdio>
#include <utility>

#include "api/api_routes.h"
#include "api/dashboard_routes.h"
#include "runtime/chat_renderer.h"
#include "runtime/model_info.h"

namespace cohort::cli {

runtime::ClusterView ServeStack::cluster_view() const {
  if (session && session->cluster) return session->cluster->view();
  return {};
}

Result<std::unique_ptr<ServeStack>> start_serving(const ServeOptions& cfg) {
  auto stack = std::make_unique<ServeStack>();
  stack->events = std::make_unique<runtime::EventLog>();
  COHORT_ASSIGN_OR_RETURN(stack->session, open_model_session(cfg.model, stack->events.get()));
  ModelSession& ms = *stack->session;
  if (ms.mpi_worker) {  // an MPI rank other than 0: its part is done
    COHORT_RETURN_IF_ERROR(ms.mpi_served);
    return stack;
  }
  stack->name = cfg.name;
  if (stack->name.empty()) {
    stack->name = cfg.model.model_path.substr(cfg.model.model_path.find_last_of('/') + 1);
  }
  auto renderer = runtime::ChatRenderer::from_gguf(*ms.file, *ms.tokenizer);
  if (!renderer.is_ok()) {
    std::fprintf(stderr, "serve: %s; using the fallback chat format\n",
                 renderer.status().message().c_str());
    renderer = runtime::ChatRenderer();
  }
  stack->engine = std::make_unique<runtime::GenerationEngine>(
      stack->name, *ms.stepper, *ms.tokenizer, std::move(renderer).value(),
      runtime::model_info_from_gguf(*ms.file, ms.n_ctx));
  stack->requests = std::make_unique<api::RequestMetrics>();

  api::Router router;
  api::add_api_routes(router, *stack->engine,
                      [](const api::HttpRequest&) { return api::dashboard_page(); });
  router.add("GET", "/v1/cluster/status", [&ms](const api::HttpRequest&) {
    api::HttpResponse r;
    r.content_type = "text/plain; charset=utf-8";
    r.body = ms.cluster ? ms.cluster->status_report()
             : ms.mpi   ? ms.mpi->status_report()
                        : "one node: no workers\n";
    return r;
  });
  api::LiveSources live;
  live.model_name = stack->name;
  live.model_summary = ms.hparams.summary();
  if (!cfg.model_note.empty()) live.model_summary = cfg.model_note + "; " + live.model_summary;
  const ServeStack* self = stack.get();
  live.cluster = [self] { return self->cluster_view(); };
  live.events = stack->events.get();
  runtime::GenerationEngine* engine = stack->engine.get();
  live.stats = [engine] { return engine->stats(); };
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
