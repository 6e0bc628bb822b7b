// Every dialect on one router, as Ollama serves them on one port: OpenAI under /v1/
// (openai_routes.h), Anthropic at /v1/messages (anthropic_routes.h), Ollama under /api/ and
// at / (ollama_routes.h), both dialects' embeddings (embedding_routes.h), with server-raised
// errors in each path's dialect (dialect_errors.h). Each request names its model; the
// registry finds it, loading it when needed (runtime/model_registry.h).
#pragma once

#include <memory>

#include "api/router.h"
#include "runtime/engine.h"
#include "runtime/model_registry.h"

namespace cohort::api {

// browser_root: what a browser gets at / (see add_ollama_routes); none: Ollama's answer.
void add_api_routes(Router& router, std::shared_ptr<runtime::ModelRegistry> models,
                    HttpHandler browser_root = {});

// One model, always loaded: `engine` (which must outlive the server the router is handed
// to) as the registry's only, resident model.
void add_api_routes(Router& router, runtime::Engine& engine, HttpHandler browser_root = {});

}  // namespace cohort::api
