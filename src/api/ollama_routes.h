// The Ollama dialect's routes, served from the models a registry offers
// (runtime/model_registry.h; a model not loaded is loaded first; clients take the bare host):
//   GET|HEAD /          200 "Ollama is running" (what clients probe for; public); when
//                       browser_root is given and the request's Accept asks for
//                       text/html (a browser), browser_root answers instead
//   GET /api/version    {"version":"0.6.8"} (semver: clients gate features on it)
//   GET /api/tags       every model offered; GET /api/ps the loaded ones, with expires_at
//                       (when an idle one unloads) and size_vram
//   POST /api/show      {model} or {name}: modelfile, parameters, template, details...
//                       (read from the loaded model: show loads it, as a request would)
//   POST /api/chat      chat; NDJSON lines by default, one object with stream:false
//   POST /api/generate  a completion of prompt (rendered as a user turn unless raw), likewise
// Either with no messages / no prompt loads the model (done_reason "load"), or unloads it
// with keep_alive 0 (done_reason "unload"); keep_alive on a request sets how long the model
// stays loaded once idle (api/ollama_keep_alive.h).
// Lines: {model, created_at, message|response, done:false} per text piece, then a done:true
// line with done_reason and the counts and durations (ollama_response.h). Errors are
// {"error":"..."}: 400 bad input, 404 unknown model, 503 loading (Retry-After), 500 otherwise; a
// failure after the stream started is sent as an {"error":...} line. When the client goes away the
// generation is cancelled.
#pragma once

#include <memory>

#include "api/router.h"
#include "runtime/model_registry.h"

namespace cohort::api {

inline constexpr const char* kOllamaVersion = "0.6.8";

void add_ollama_routes(Router& router, std::shared_ptr<runtime::ModelRegistry> models,
                       HttpHandler browser_root = {});

// True when the request's Accept header lists text/html (browsers do; API clients do not).
bool accepts_html(const HttpRequest& req);

}  // namespace cohort::api
