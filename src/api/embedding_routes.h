// The embedding endpoints of both dialects, served by the model each request names (the
// registry finds or loads it; runtime/model_registry.h) through Engine::embed:
//   POST /v1/embeddings   OpenAI: {"object":"list","data":[{"object":"embedding","index":i,
//                         "embedding":[floats] | "<base64 of little-endian float32>"}],
//                         "model","usage":{"prompt_tokens","total_tokens"}}
//   POST /api/embed       Ollama: {model, embeddings:[[floats]], total_duration,
//                         load_duration, prompt_eval_count}
//   POST /api/embeddings  Ollama's legacy form: {embedding:[floats]}
// Bodies: api/embedding_request.h. Embeddings are pooled and L2-normalised (Engine::embed).
// `dimensions` shortens them (the first values, normalised again: what OpenAI's
// text-embedding-3 and Ollama do) rather than refusing: a client asking for fewer values
// gets what those services give it. Above the model's length it is a 400.
//
// Errors in each dialect's shape: 400 for bad input (OpenAI: param names the field) and for
// an input longer than the context (OpenAI: code context_length_exceeded, the message gives
// the context size), 404 for an unknown model, 503 while loading or when the cluster lost a
// node, 501 when the model gives no embeddings, 500 otherwise.
//
#pragma once

#include <memory>

#include "api/router.h"
#include "runtime/model_registry.h"

namespace cohort::api {

void add_embedding_routes(Router& router, std::shared_ptr<runtime::ModelRegistry> models);

}  // namespace cohort::api
