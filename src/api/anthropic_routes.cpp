#include "api/anthropic_routes.h"

#include <exception>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "api/anthropic_error.h"
#include "api/anthropic_messages.h"
#include "api/anthropic_stream.h"
#include "api/json_body.h"
#include "api/model_lookup.h"
#include "api/prompt_check.h"
#include "api/request_id.h"
#include "api/sse.h"

namespace cohort::api {
namespace {

using nlohmann::json;

HttpResponse anthropic_engine_error(const Status& st) {
  return anthropic_error(http_status_for(st), st.message());
}

// Parses, finds the model (loading it when needed: *lease holds it) and renders the prompt;
// on failure *error is the response.
Result<MessagesParams> prepare(runtime::ModelRegistry& models, const HttpRequest& req,
                               bool count_only, HttpResponse* error, runtime::ModelLease* lease) {
  Result<json> body = parse_json_object(req.body);
  if (!body.is_ok()) {
    *error = anthropic_error(400, body.status().message());
    return body.status();
  }
  Result<MessagesParams> p = parse_messages_request(*body, count_only);
  if (!p.is_ok()) {
    *error = anthropic_error(400, p.status().message());
    return p.status();
  }
  Result<runtime::ModelLease> found = models.acquire(p->model);
  if (!found.is_ok()) {
    const Status& st = found.status();
    *error = st.code() == StatusCode::kNotFound
                 ? anthropic_error(404, "model: " + p->model)
                 : anthropic_error(http_status_for(st), st.message());
    return st;
  }
  *lease = std::move(found).value();
  runtime::Engine& engine = **lease;
  if (!engine.ready()) {
    *error = anthropic_error(503, "the model is still loading");
    return Status::unavailable("loading");
  }
  p->tool_format = apply_tools(p->tools, engine.model_info().chat_template, &p->chat, &p->request);
  Result<std::string> prompt = engine.render_chat(p->chat);
  if (!prompt.is_ok()) {
    *error = anthropic_error(400, prompt.status().message());
    return prompt.status();
  }
  p->request.prompt = std::move(prompt).value();
  return p;
}

HttpResponse messages(runtime::ModelRegistry& models, const HttpRequest& req) {
  HttpResponse error;
  runtime::ModelLease lease;
  Result<MessagesParams> p = prepare(models, req, /*count_only=*/false, &error, &lease);
  if (!p.is_ok()) return error;
  runtime::Engine& engine = *lease;
  Result<int64_t> n = check_prompt(engine, p->request);
  if (!n.is_ok()) return anthropic_engine_error(n.status());
  const std::string id = random_id("msg_");
  if (p->stream) {
    AnthropicStream s{id, p->model, *n, std::move(p->request), p->tool_format};
    StreamProducer producer = anthropic_stream_producer(engine, std::move(s));
    return sse_response(holding_lease(std::move(lease), std::move(producer)));
  }
  Result<runtime::CompletionResult> result = engine.complete(p->request);
  if (!result.is_ok()) return anthropic_engine_error(result.status());
  return json_response(200, messages_response(id, p->model, *result, p->tool_format));
}

HttpResponse count_tokens(runtime::ModelRegistry& models, const HttpRequest& req) {
  HttpResponse error;
  runtime::ModelLease lease;
  Result<MessagesParams> p = prepare(models, req, /*count_only=*/true, &error, &lease);
  if (!p.is_ok()) return error;
  Result<int64_t> n = lease->count_tokens(p->request.prompt, true);
  if (!n.is_ok()) return anthropic_engine_error(n.status());
  return json_response(200, {{"input_tokens", *n}});
}

template <typename F>
HttpHandler anthropic_guarded(F f) {
  return [f = std::move(f)](const HttpRequest& req) -> HttpResponse {
    try {
      return f(req);
    } catch (const std::exception& e) {
      return anthropic_error(500, std::string("anthropic: internal error: ") + e.what());
    }
  };
}

}  // namespace

void add_anthropic_routes(Router& router, std::shared_ptr<runtime::ModelRegistry> models) {
  router.add("POST", "/v1/messages", anthropic_guarded([models](const HttpRequest& req) {
               return messages(*models, req);
             }));
  router.add(
      "POST", "/v1/messages/count_tokens",
      anthropic_guarded([models](const HttpRequest& req) { return count_tokens(*models, req); }));
}

}  // namespace cohort::api
