// The OpenAI dialect's routes, served from one runtime::Engine:
//   GET /health, GET /v1/health  200 {"status":"ok"} when ready, else 503 {"status":"loading"}
//   GET /v1/models               the engine's model as a one-entry list
//   GET /v1/models/{id}          that model object, or 404 model_not_found
//   POST /v1/chat/completions    chat, whole or streamed as SSE (openai_chat.h, openai_stream.h)
//   POST /v1/completions         a completion, whole or streamed (openai_completion.h)
// /health is public; the others need the server's API key when one is set. Errors use
// OpenAI's shape: 400 for bad input (param names the field), 404 model_not_found for a
// model we do not serve (model_match.h), 400 context_length_exceeded for a prompt that does
// not fit, 503 while loading or when the cluster lost a node, 500 otherwise. Validation
// happens before a stream starts, so those are plain JSON errors even with stream:true.
//
// The engine must outlive the server the routes are handed to. Handlers call the engine
// concurrently (the Engine contract allows it).
#pragma once

#include "api/router.h"
#include "runtime/engine.h"

namespace cohort::api {

void add_openai_routes(Router& router, runtime::Engine& engine);

}  // namespace cohort::api
