#include "api/ollama_routes.h"

#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "api/json_body.h"
#include "api/model_lookup.h"
#include "api/ollama_error.h"
#include "api/ollama_request.h"
#include "api/ollama_response.h"
#include "api/prompt_check.h"
#include "api/sse.h"

namespace cohort::api {
namespace {

using nlohmann::json;

HttpResponse ollama_engine_error(const Status& st) {
  return ollama_error(http_status_for(st), st.message());
}

// Runs the generation, streaming lines through `w` when set; returns the last line (or, not
// streamed, the whole answer); null when the client went away.
Result<json> ollama_run(runtime::Engine& engine, const OllamaParams& p, StreamWriter* w) {
  const int64_t t0 = unix_time_ns();
  int64_t t_first = 0;
  runtime::CompletionRequest req = p.request;
  std::optional<ToolStreamFilter> filter;
  if (p.tool_format && w != nullptr) filter.emplace(*p.tool_format);
  const auto write_piece = [&](const std::string& text) {
    return w->write(ndjson_line(ollama_piece(p.model, p.chat, text)));
  };
  if (w != nullptr) {
    req.on_text = [&](std::string_view piece) {
      if (t_first == 0) t_first = unix_time_ns();
      if (!filter) return write_piece(std::string(piece));
      const std::string content = filter->push(piece);
      return content.empty() || write_piece(content);
    };
  }
  Result<runtime::CompletionResult> result = engine.complete(req);
  if (!result.is_ok()) return result.status();
  if (result->finish_reason == "cancelled") return json();
  const int64_t t1 = unix_time_ns();
  if (t_first == 0) t_first = t1;
  OllamaTimings t{t1 - t0, t_first - t0, t1 - t_first};
  std::string text = w != nullptr ? std::string() : result->text;
  std::vector<ToolCall> calls;
  if (p.tool_format) {
    std::string unsent;
    ParsedOutput parsed =
        filter ? filter->finish(&unsent) : parse_tool_output(*p.tool_format, result->text);
    calls = std::move(parsed.calls);
    if (w == nullptr) {
      text = calls.empty() ? result->text : parsed.content;
    } else if (!unsent.empty() && !write_piece(unsent)) {
      return json();
    }
  }
  json last = ollama_final(p.model, p.chat, text, *result, t);
  if (!calls.empty() && p.chat) {
    json out = json::array();
    for (const ToolCall& c : calls) {
      out.push_back({{"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    }
    last["message"]["tool_calls"] = std::move(out);
  }
  return last;
}

// A request without a prompt or messages: load the model, or unload it with keep_alive 0.
HttpResponse ollama_load_or_unload(runtime::ModelRegistry& models, const OllamaParams& p,
                                   bool chat) {
  const bool unload = p.keep_alive_ms && *p.keep_alive_ms == 0;
  const Status st = unload ? models.unload(p.model) : models.load(p.model, p.keep_alive_ms);
  if (!st.is_ok()) return ollama_lookup_error(st, p.model);
  return json_response(200, ollama_loaded(p.model, chat, unload ? "unload" : "load"));
}

HttpResponse ollama_generate(runtime::ModelRegistry& models, const HttpRequest& req, bool chat) {
  Result<json> body = parse_json_object(req.body);
  if (!body.is_ok()) return ollama_error(400, body.status().message());
  Result<OllamaParams> p = chat ? parse_ollama_chat(*body) : parse_ollama_generate(*body);
  if (!p.is_ok()) return ollama_error(400, p.status().message());
  if (p->load_only) return ollama_load_or_unload(models, *p, chat);
  Result<runtime::ModelLease> lease = models.acquire(p->model, p->keep_alive_ms);
  if (!lease.is_ok()) return ollama_lookup_error(lease.status(), p->model);
  runtime::Engine& engine = **lease;
  if (!engine.ready()) return ollama_error(503, "the model is still loading");
  if (p->render) {
    p->tool_format =
        apply_tools(p->tools, engine.model_info().chat_template, &p->chat_prompt, &p->request);
    Result<std::string> prompt = engine.render_chat(p->chat_prompt);
    if (!prompt.is_ok()) return ollama_error(400, prompt.status().message());
    p->request.prompt = std::move(prompt).value();
  }
  Result<int64_t> n = check_prompt(engine, p->request);
  if (!n.is_ok()) return ollama_engine_error(n.status());
  if (!p->stream) {
    Result<json> answer = ollama_run(engine, *p, nullptr);
    if (!answer.is_ok()) return ollama_engine_error(answer.status());
    return json_response(200, *answer);
  }
  return ndjson_response(
      [lease = std::move(lease).value(), params = std::move(p).value()](StreamWriter& w) {
        Result<json> last = ollama_run(*lease, params, &w);
        if (!last.is_ok()) {
          w.write(ndjson_line({{"error", last.status().message()}}));
        } else if (!last->is_null()) {  // null: the client has gone
          w.write(ndjson_line(*last));
        }
      });
}

HttpResponse show(runtime::ModelRegistry& models, const HttpRequest& req, int64_t modified) {
  Result<json> body = parse_json_object(req.body);
  if (!body.is_ok()) return ollama_error(400, body.status().message());
  std::string name;
  for (const char* key : {"model", "name"}) {
    if (body->contains(key) && (*body)[key].is_string()) name = (*body)[key].get<std::string>();
    if (!name.empty()) break;
  }
  if (name.empty()) return ollama_error(400, "model is required");
  // The template and details come from the loaded model: show loads it (as a request would).
  Result<runtime::ModelLease> lease = models.acquire(name);
  if (!lease.is_ok()) return ollama_lookup_error(lease.status(), name);
  return json_response(200, ollama_show((*lease)->model_name(), (*lease)->model_info(), modified));
}

// /api/tags: every model offered; /api/ps (`ps`): the loaded ones, with their expiry.
HttpResponse list(runtime::ModelRegistry& models, int64_t modified, bool ps) {
  json entries = json::array();
  for (const runtime::ModelStatus& m : models.list()) {
    if (ps && m.state != runtime::ModelState::kLoaded) continue;
    std::optional<int64_t> expires_ns;
    if (m.expires_unix_ms) expires_ns = *m.expires_unix_ms * 1000000;
    entries.push_back(ollama_model_entry(m.name, m.info, modified, ps, expires_ns));
  }
  return json_response(200, {{"models", std::move(entries)}});
}

template <typename F>
HttpHandler ollama_guarded(F f) {
  return [f = std::move(f)](const HttpRequest& req) -> HttpResponse {
    try {
      return f(req);
    } catch (const std::exception& e) {
      return ollama_error(500, std::string("ollama: internal error: ") + e.what());
    }
  };
}

}  // namespace

bool accepts_html(const HttpRequest& req) {
  std::optional<std::string_view> accept = req.header("accept");
  return accept && accept->find("text/html") != std::string_view::npos;
}

void add_ollama_routes(Router& router, std::shared_ptr<runtime::ModelRegistry> models,
                       HttpHandler browser_root) {
  const int64_t started = unix_time_ns();
  router.add("GET", "/",
             ollama_guarded([browser_root = std::move(browser_root)](const HttpRequest& req) {
               if (browser_root && accepts_html(req)) return browser_root(req);
               return text_response(200, "Ollama is running");
             }),
             RouteAccess::kPublic);
  router.add("GET", "/api/version", ollama_guarded([](const HttpRequest&) {
               return json_response(200, {{"version", kOllamaVersion}});
             }));
  router.add("GET", "/api/tags", ollama_guarded([models, started](const HttpRequest&) {
               return list(*models, started, /*ps=*/false);
             }));
  router.add("GET", "/api/ps", ollama_guarded([models, started](const HttpRequest&) {
               return list(*models, started, /*ps=*/true);
             }));
  router.add("POST", "/api/show", ollama_guarded([models, started](const HttpRequest& req) {
               return show(*models, req, started);
             }));
  router.add("POST", "/api/chat", ollama_guarded([models](const HttpRequest& req) {
               return ollama_generate(*models, req, /*chat=*/true);
             }));
  router.add("POST", "/api/generate", ollama_guarded([models](const HttpRequest& req) {
               return ollama_generate(*models, req, /*chat=*/false);
             }));
}

}  // namespace cohort::api
