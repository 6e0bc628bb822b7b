// The OpenAI dialect's routes, served from one runtime::Engine:
//   GET /health, GET /v1/health  200 {"status":"ok"} when ready, else 503 {"status":"loading"}
//   GET|HEAD /                   200, a short text (the dashboard replaces it)
//   GET /v1/models               the engine's model as a one-entry list
//   POST /v1/completions         one completion, not streamed (see openai_completion.h)
// /health and / are public; the others need the server's API key when one is set. Errors
// use OpenAI's shape; engine errors map kInvalidArgument/kOutOfRange -> 400,
// kUnavailable -> 503, anything else -> 500, each with the engine's message.
//
// The engine must outlive the server the routes are handed to. Handlers call
// engine.complete() concurrently (the Engine contract allows it).
#pragma once

#include "api/router.h"
#include "runtime/engine.h"

namespace cohort::api {

void add_openai_routes(Router& router, runtime::Engine& engine);

}  // namespace cohort::api
