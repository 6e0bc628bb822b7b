// The OpenAI dialect's routes, served from the models a registry offers
// (runtime/model_registry.h):
//   GET /health, GET /v1/health  200 {"status":"ok"} when ready, else 503 {"status":"loading"}
//   GET /v1/models               every model offered, with "loaded" (true or false)
//   GET /v1/models/{id}          that model object, or 404 model_not_found
//   POST /v1/models/{id}/load    loads it (unloading the least recently used idle one when
//                                there is no room); POST /v1/models/{id}/unload unloads it
//                                (once idle); both answer with the model object
//   POST /v1/chat/completions    chat, whole or streamed as SSE (openai_chat.h, openai_stream.h)
//   POST /v1/completions         a completion, whole or streamed (openai_completion.h)
// /health is public; the others need the server's API key when one is set. Errors use
// OpenAI's shape: 400 for bad input (param names the field), 404 model_not_found for a
// model we do not serve, 400 for a model name that looks like a path, 400
// context_length_exceeded for a prompt that does not fit, 503 (Retry-After) while loading,
// when too many requests wait for a model to load, or when the cluster lost a node, 500
// otherwise. A request for a model that is not loaded loads it first. Validation
// happens before a stream starts, so those are plain JSON errors even with stream:true.
//
// Handlers call the engines concurrently (the Engine contract allows it).
#pragma once

#include <memory>

#include "api/router.h"
#include "runtime/model_registry.h"

namespace cohort::api {

void add_openai_routes(Router& router, std::shared_ptr<runtime::ModelRegistry> models);

}  // namespace cohort::api
