#include "api/openai_routes.h"

#include <exception>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "api/json_body.h"
#include "api/openai_completion.h"
#include "api/openai_error.h"
#include "api/request_id.h"

namespace cohort::api {
namespace {

using nlohmann::json;

HttpResponse health(const runtime::Engine& engine) {
  if (engine.ready()) return json_response(200, {{"status", "ok"}});
  HttpResponse res = json_response(503, {{"status", "loading"}});
  res.set_header("Retry-After", "1");
  return res;
}

HttpResponse models(const runtime::Engine& engine, int64_t created) {
  json model = {{"id", engine.model_name()},
                {"object", "model"},
                {"created", created},
                {"owned_by", "cohort"}};
  return json_response(200, {{"object", "list"}, {"data", json::array({std::move(model)})}});
}

HttpResponse engine_error(const Status& st) {
  switch (st.code()) {
    case StatusCode::kInvalidArgument:
      return openai_error(400, st.message());
    case StatusCode::kOutOfRange:
      return openai_error(400, st.message(), "prompt", "context_length_exceeded");
    case StatusCode::kUnavailable:
      return openai_error(503, st.message());
    default:
      return openai_error(500, st.message());
  }
}

HttpResponse completions(runtime::Engine& engine, const HttpRequest& req) {
  Result<json> body = parse_json_object(req.body);
  if (!body.is_ok()) return openai_error(400, body.status().message());
  std::string param;
  Result<CompletionParams> params = parse_completion_request(body.value(), &param);
  if (!params.is_ok()) return openai_error(400, params.status().message(), param);
  if (!engine.ready()) return openai_error(503, "the model is still loading");

  Result<runtime::CompletionResult> result = engine.complete(params->request);
  if (!result.is_ok()) return engine_error(result.status());
  const std::string model = params->model.empty() ? engine.model_name() : params->model;
  return json_response(
      200, completion_response(random_id("cmpl-"), unix_time_s(), model, result.value()));
}

// Handlers must not throw: nlohmann-json and allocation can, so every one is wrapped.
template <typename F>
HttpHandler guarded(F f) {
  return [f = std::move(f)](const HttpRequest& req) -> HttpResponse {
    try {
      return f(req);
    } catch (const std::exception& e) {
      return openai_error(500, std::string("openai: internal error: ") + e.what());
    }
  };
}

}  // namespace

void add_openai_routes(Router& router, runtime::Engine& engine) {
  const int64_t created = unix_time_s();
  auto health_handler = guarded([&engine](const HttpRequest&) { return health(engine); });
  router.add("GET", "/health", health_handler, RouteAccess::kPublic);
  router.add("GET", "/v1/health", health_handler, RouteAccess::kPublic);
  router.add("GET", "/",
             guarded([](const HttpRequest&) { return text_response(200, "cohort is running\n"); }),
             RouteAccess::kPublic);
  router.add("GET", "/v1/models",
             guarded([&engine, created](const HttpRequest&) { return models(engine, created); }));
  router.add("POST", "/v1/completions",
             guarded([&engine](const HttpRequest& req) { return completions(engine, req); }));
}

}  // namespace cohort::api
