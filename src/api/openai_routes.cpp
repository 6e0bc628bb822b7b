#include "api/openai_routes.h"

#include <exception>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "api/json_body.h"
#include "api/model_match.h"
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

HttpResponse health(const runtime::Engine& engine) {
  if (engine.ready()) return json_response(200, {{"status", "ok"}});
  HttpResponse res = json_response(503, {{"status", "loading"}});
  res.set_header("Retry-After", "1");
  return res;
}

json model_object(const runtime::Engine& engine, int64_t created) {
  json m = {{"id", engine.model_name()},
            {"object", "model"},
            {"created", created},
            {"owned_by", "cohort"}};
  const int64_t n_ctx = engine.model_info().context_length;
  if (n_ctx > 0) m["context_length"] = n_ctx;
  return m;
}

HttpResponse models(const runtime::Engine& engine, int64_t created) {
  return json_response(
      200, {{"object", "list"}, {"data", json::array({model_object(engine, created)})}});
}

HttpResponse model_not_found(const std::string& model) {
  return openai_error(404, "the model '" + model + "' does not exist", "model", "model_not_found");
}

HttpResponse one_model(const runtime::Engine& engine, int64_t created, const HttpRequest& req) {
  const std::string id = req.path.substr(std::string("/v1/models/").size());
  if (!model_matches(id, engine.model_name())) return model_not_found(id);
  return json_response(200, model_object(engine, created));
}

HttpResponse engine_error(const Status& st, const char* prompt_param) {
  if (st.code() == StatusCode::kOutOfRange) {
    return openai_error(400, st.message(), prompt_param, "context_length_exceeded");
  }
  return openai_error(http_status_for(st), st.message());
}

// The part chat and completions share once the prompt is known: check it, then answer
// whole or as a stream.
HttpResponse generate(runtime::Engine& engine, OpenAiStream s, bool stream,
                      const char* prompt_param) {
  Result<int64_t> n = check_prompt(engine, s.request);
  if (!n.is_ok()) return engine_error(n.status(), prompt_param);
  if (stream) return sse_response(openai_stream_producer(engine, std::move(s)));
  Result<runtime::CompletionResult> result = engine.complete(s.request);
  if (!result.is_ok()) return engine_error(result.status(), prompt_param);
  return json_response(200, s.chat ? chat_response(s.id, s.created, s.model, *result, s.tools)
                                   : completion_response(s.id, s.created, s.model, *result));
}

HttpResponse completions(runtime::Engine& engine, const HttpRequest& req) {
  Result<json> body = parse_json_object(req.body);
  if (!body.is_ok()) return openai_error(400, body.status().message());
  std::string param;
  Result<CompletionParams> params = parse_completion_request(body.value(), &param);
  if (!params.is_ok()) return openai_error(400, params.status().message(), param);
  if (!model_matches(params->model, engine.model_name())) return model_not_found(params->model);
  OpenAiStream s;
  s.chat = false;
  s.id = random_id("cmpl-");
  s.created = unix_time_s();
  s.model = params->model.empty() ? engine.model_name() : params->model;
  s.include_usage = params->stream.include_usage;
  s.request = std::move(params->request);
  return generate(engine, std::move(s), params->stream.stream, "prompt");
}

HttpResponse chat_completions(runtime::Engine& engine, const HttpRequest& req) {
  Result<json> body = parse_json_object(req.body);
  if (!body.is_ok()) return openai_error(400, body.status().message());
  std::string param;
  Result<ChatParams> params = parse_chat_request(body.value(), &param);
  if (!params.is_ok()) return openai_error(400, params.status().message(), param);
  if (!model_matches(params->model, engine.model_name())) return model_not_found(params->model);
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
  return generate(engine, std::move(s), params->stream.stream, "messages");
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
  router.add("GET", "/v1/models",
             guarded([&engine, created](const HttpRequest&) { return models(engine, created); }));
  router.add_prefix("GET", "/v1/models/", guarded([&engine, created](const HttpRequest& req) {
                      return one_model(engine, created, req);
                    }));
  router.add("POST", "/v1/completions",
             guarded([&engine](const HttpRequest& req) { return completions(engine, req); }));
  router.add("POST", "/v1/chat/completions",
             guarded([&engine](const HttpRequest& req) { return chat_completions(engine, req); }));
}

}  // namespace cohort::api
