#include "api/openai_routes.h"

#include <exception>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "api/json_body.h"
#include "api/model_lookup.h"
#include "api/openai_chat.h"
#include "api/openai_completion.h"
#include "api/openai_error.h"
#include "api/openai_stream.h"
#include "api/prompt_check.h"
#include "api/request_id.h"
#include "api/sse.h"

namespace cohort::api {
namespace {

using nlohmann::json;

HttpResponse health(runtime::ModelRegistry& models) {
  if (models.ready()) return json_response(200, {{"status", "ok"}});
  HttpResponse res = json_response(503, {{"status", "loading"}});
  res.set_header("Retry-After", "1");
  return res;
}

json model_object(const runtime::ModelStatus& m, int64_t created) {
  json o = {{"id", m.name}, {"object", "model"}, {"created", created}, {"owned_by", "cohort"}};
  if (m.info.context_length > 0) o["context_length"] = m.info.context_length;
  o["loaded"] = m.state == runtime::ModelState::kLoaded;
  return o;
}

HttpResponse models_list(runtime::ModelRegistry& models, int64_t created) {
  json data = json::array();
  for (const runtime::ModelStatus& m : models.list()) data.push_back(model_object(m, created));
  return json_response(200, {{"object", "list"}, {"data", std::move(data)}});
}

HttpResponse one_model(runtime::ModelRegistry& models, int64_t created, const HttpRequest& req) {
  const std::string id = req.path.substr(std::string("/v1/models/").size());
  Result<runtime::ModelStatus> m = models.find(id);
  if (!m.is_ok()) return openai_lookup_error(m.status(), id);
  return json_response(200, model_object(*m, created));
}

// POST /v1/models/{id}/load and /v1/models/{id}/unload.
HttpResponse openai_load_or_unload(runtime::ModelRegistry& models, int64_t created,
                                   const HttpRequest& req) {
  std::string id = req.path.substr(std::string("/v1/models/").size());
  const size_t slash = id.rfind('/');
  const std::string action = slash == std::string::npos ? "" : id.substr(slash + 1);
  if (action != "load" && action != "unload") {
    return openai_error(404, "http: no route for POST " + req.path);
  }
  id.resize(slash);
  const Status st = action == "load" ? models.load(id) : models.unload(id);
  if (!st.is_ok()) return openai_lookup_error(st, id);
  Result<runtime::ModelStatus> m = models.find(id);
  if (!m.is_ok()) return openai_lookup_error(m.status(), id);
  return json_response(200, model_object(*m, created));
}

HttpResponse openai_engine_error(const Status& st, const char* prompt_param) {
  if (st.code() == StatusCode::kOutOfRange) {
    return openai_error(400, st.message(), prompt_param, "context_length_exceeded");
  }
  return openai_error(http_status_for(st), st.message());
}

// The part chat and completions share once the prompt is known: check it, then answer
// whole or as a stream.
HttpResponse openai_generate(runtime::ModelLease lease, OpenAiStream s, bool stream,
                             const char* prompt_param) {
  runtime::Engine& engine = *lease;
  Result<int64_t> n = check_prompt(engine, s.request);
  if (!n.is_ok()) return openai_engine_error(n.status(), prompt_param);
  if (stream) {
    StreamProducer producer = openai_stream_producer(engine, std::move(s));
    return sse_response(holding_lease(std::move(lease), std::move(producer)));
  }
  Result<runtime::CompletionResult> result = engine.complete(s.request);
  if (!result.is_ok()) return openai_engine_error(result.status(), prompt_param);
  return json_response(200, s.chat ? chat_response(s.id, s.created, s.model, *result, s.tools)
                                   : completion_response(s.id, s.created, s.model, *result));
}

HttpResponse completions(runtime::ModelRegistry& models, const HttpRequest& req) {
  Result<json> body = parse_json_object(req.body);
  if (!body.is_ok()) return openai_error(400, body.status().message());
  std::string param;
  Result<CompletionParams> params = parse_completion_request(body.value(), &param);
  if (!params.is_ok()) return openai_error(400, params.status().message(), param);
  Result<runtime::ModelLease> lease = models.acquire(params->model);
  if (!lease.is_ok()) return openai_lookup_error(lease.status(), params->model);
  runtime::Engine& engine = **lease;
  OpenAiStream s;
  s.chat = false;
  s.id = random_id("cmpl-");
  s.created = unix_time_s();
  s.model = params->model.empty() ? engine.model_name() : params->model;
  s.include_usage = params->stream.include_usage;
  s.request = std::move(params->request);
  return openai_generate(std::move(lease).value(), std::move(s), params->stream.stream, "prompt");
}

HttpResponse chat_completions(runtime::ModelRegistry& models, const HttpRequest& req) {
  Result<json> body = parse_json_object(req.body);
  if (!body.is_ok()) return openai_error(400, body.status().message());
  std::string param;
  Result<ChatParams> params = parse_chat_request(body.value(), &param);
  if (!params.is_ok()) return openai_error(400, params.status().message(), param);
  Result<runtime::ModelLease> lease = models.acquire(params->model);
  if (!lease.is_ok()) return openai_lookup_error(lease.status(), params->model);
  runtime::Engine& engine = **lease;
  if (!engine.ready()) return openai_error(503, "the model is still loading");
  const std::optional<ToolFormat> tools = apply_tools(
      params->tools, engine.model_info().chat_template, &params->chat, &params->request);
  Result<std::string> prompt = engine.render_chat(params->chat);
  if (!prompt.is_ok()) return openai_error(400, prompt.status().message(), "messages");
  OpenAiStream s;
  s.chat = true;
  s.id = random_id("chatcmpl-");
  s.created = unix_time_s();
  s.model = params->model.empty() ? engine.model_name() : params->model;
  s.include_usage = params->stream.include_usage;
  s.request = std::move(params->request);
  s.request.prompt = std::move(prompt).value();
  s.tools = tools;
  return openai_generate(std::move(lease).value(), std::move(s), params->stream.stream, "messages");
}

// Handlers must not throw: nlohmann-json and allocation can, so every one is wrapped.
template <typename F>
HttpHandler openai_guarded(F f) {
  return [f = std::move(f)](const HttpRequest& req) -> HttpResponse {
    try {
      return f(req);
    } catch (const std::exception& e) {
      return openai_error(500, std::string("openai: internal error: ") + e.what());
    }
  };
}

}  // namespace

void add_openai_routes(Router& router, std::shared_ptr<runtime::ModelRegistry> models) {
  const int64_t created = unix_time_s();
  auto health_handler = openai_guarded([models](const HttpRequest&) { return health(*models); });
  router.add("GET", "/health", health_handler, RouteAccess::kPublic);
  router.add("GET", "/v1/health", health_handler, RouteAccess::kPublic);
  router.add("GET", "/v1/models", openai_guarded([models, created](const HttpRequest&) {
               return models_list(*models, created);
             }));
  router.add_prefix("GET", "/v1/models/", openai_guarded([models, created](const HttpRequest& req) {
                      return one_model(*models, created, req);
                    }));
  router.add_prefix("POST", "/v1/models/",
                    openai_guarded([models, created](const HttpRequest& req) {
                      return openai_load_or_unload(*models, created, req);
                    }));
  router.add("POST", "/v1/completions", openai_guarded([models](const HttpRequest& req) {
               return completions(*models, req);
             }));
  router.add("POST", "/v1/chat/completions", openai_guarded([models](const HttpRequest& req) {
               return chat_completions(*models, req);
             }));
}

}  // namespace cohort::api
