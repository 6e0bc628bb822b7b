// How the dialects reach a model through the registry (runtime/model_registry.h): look the
// requested name up (loading the model when needed) and keep the model loaded for as long
// as a response that streams from it is still producing.
#pragma once

#include <string>

#include "api/http_message.h"
#include "runtime/model_registry.h"

namespace cohort::api {

// A producer that holds `lease` until it has run (and until it is destroyed unrun).
StreamProducer holding_lease(runtime::ModelLease lease, StreamProducer producer);

// A failed registry lookup (or load) of `model` in each dialect's shape: 404 (OpenAI:
// model_not_found) for an unknown model, else the status's HTTP code.
HttpResponse openai_lookup_error(const Status& st, const std::string& model);
HttpResponse ollama_lookup_error(const Status& st, const std::string& model);

}  // namespace cohort::api
