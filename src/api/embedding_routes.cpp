#include "api/embedding_routes.h"

#include <exception>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "api/base64.h"
#include "api/embedding_request.h"
#include "api/json_body.h"
#include "api/model_lookup.h"
#include "api/ollama_error.h"
#include "api/ollama_response.h"
#include "api/openai_error.h"
#include "api/prompt_check.h"

namespace cohort::api {
namespace {

using nlohmann::json;

int status_for(const Status& st) {
  return st.code() == StatusCode::kUnsupported ? 501 : http_status_for(st);
}

// Whether the engine can answer params now: kInvalidArgument for dimensions beyond the
// model's, kUnavailable while loading, kUnsupported without embeddings.
Status check_engine(const runtime::Engine& engine, const EmbeddingParams& params) {
  if (!engine.ready()) return Status::unavailable("the model is still loading");
  const int64_t length = engine.embedding_length();
  if (length <= 0)
    return Status::unsupported("the model '" + engine.model_name() + "' does not serve embeddings");
  if (params.request.dimensions > length) {
    return Status::invalid_argument("'dimensions' is " + std::to_string(params.request.dimensions) +
                                    "; the model's embeddings have " + std::to_string(length));
  }
  return Status::ok();
}

HttpResponse openai_failure(const Status& st, const char* param) {
  if (st.code() == StatusCode::kOutOfRange) {
    return openai_error(400, st.message(), "input", "context_length_exceeded");
  }
  const int status = status_for(st);
  return openai_error(status, st.message(), status == 400 ? param : "");
}

HttpResponse openai_embeddings(runtime::ModelRegistry& models, const HttpRequest& req) {
  Result<json> body = parse_json_object(req.body);
  if (!body.is_ok()) return openai_error(400, body.status().message());
  std::string param;
  Result<EmbeddingParams> params = parse_openai_embedding_request(body.value(), &param);
  if (!params.is_ok()) return openai_error(400, params.status().message(), param);
  Result<runtime::ModelLease> lease = models.acquire(params->model);
  if (!lease.is_ok()) return openai_lookup_error(lease.status(), params->model);
  runtime::Engine& engine = **lease;
  const Status ok = check_engine(engine, *params);
  if (!ok.is_ok()) return openai_failure(ok, "dimensions");
  Result<runtime::EmbeddingResult> result = engine.embed(params->request);
  if (!result.is_ok()) return openai_failure(result.status(), "input");
  json data = json::array();
  for (size_t i = 0; i < result->embeddings.size(); ++i) {
    const std::vector<float>& e = result->embeddings[i];
    data.push_back({{"object", "embedding"},
                    {"index", i},
                    {"embedding", params->base64 ? json(base64_floats(e)) : json(e)}});
  }
  const int64_t n = result->prompt_tokens;
  return json_response(200, {{"object", "list"},
                             {"data", std::move(data)},
                             {"model", params->model.empty() ? engine.model_name() : params->model},
                             {"usage", {{"prompt_tokens", n}, {"total_tokens", n}}}});
}

// Ollama's two forms share everything but the parser and the answer's shape.
HttpResponse ollama_embeddings(runtime::ModelRegistry& models, const HttpRequest& req,
                               bool legacy) {
  const int64_t t0 = unix_time_ns();
  Result<json> body = parse_json_object(req.body);
  if (!body.is_ok()) return ollama_error(400, body.status().message());
  std::string param;
  Result<EmbeddingParams> params = legacy ? parse_ollama_embeddings_request(body.value(), &param)
                                          : parse_ollama_embed_request(body.value(), &param);
  if (!params.is_ok()) return ollama_error(400, params.status().message());
  Result<runtime::ModelLease> lease = models.acquire(params->model);
  if (!lease.is_ok()) return ollama_lookup_error(lease.status(), params->model);
  runtime::Engine& engine = **lease;
  const Status ok = check_engine(engine, *params);
  if (!ok.is_ok()) return ollama_error(status_for(ok), ok.message());
  runtime::EmbeddingResult result;
  if (!params->load_only) {
    Result<runtime::EmbeddingResult> r = engine.embed(params->request);
    if (!r.is_ok()) return ollama_error(status_for(r.status()), r.status().message());
    result = std::move(r).value();
  }
  if (legacy) {
    json e = result.embeddings.empty() ? json::array() : json(result.embeddings.front());
    return json_response(200, {{"embedding", std::move(e)}});
  }
  return json_response(200, {{"model", params->model},
                             {"embeddings", result.embeddings},
                             {"total_duration", unix_time_ns() - t0},
                             {"load_duration", 0},
                             {"prompt_eval_count", result.prompt_tokens}});
}

// Handlers must not throw: nlohmann-json and allocation can, so each is wrapped; the error
// takes the dialect's shape.
template <typename F>
HttpHandler embedding_guarded(F f, bool ollama) {
  return [f = std::move(f), ollama](const HttpRequest& req) -> HttpResponse {
    try {
      return f(req);
    } catch (const std::exception& e) {
      const std::string message = std::string("embeddings: internal error: ") + e.what();
      return ollama ? ollama_error(500, message) : openai_error(500, message);
    }
  };
}

}  // namespace

void add_embedding_routes(Router& router, std::shared_ptr<runtime::ModelRegistry> models) {
  router.add(
      "POST", "/v1/embeddings",
      embedding_guarded(
          [models](const HttpRequest& req) { return openai_embeddings(*models, req); }, false));
  router.add(
      "POST", "/api/embed",
      embedding_guarded(
          [models](const HttpRequest& req) { return ollama_embeddings(*models, req, false); },
          true));
  router.add("POST", "/api/embeddings",
             embedding_guarded(
                 [models](const HttpRequest& req) { return ollama_embeddings(*models, req, true); },
                 true));
}

}  // namespace cohort::api
