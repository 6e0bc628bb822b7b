// The Anthropic dialect's routes, served from the models a registry offers
// (runtime/model_registry.h; a model not loaded is loaded first):
//   POST /v1/messages               a message, whole or streamed (anthropic_messages.h,
//                                   anthropic_stream.h)
//   POST /v1/messages/count_tokens  {"input_tokens": N}, the rendered prompt's token count
// Query strings are ignored (Claude Code posts to /v1/messages?beta=true); the key may come
// as x-api-key or Bearer; any anthropic-version is accepted. Errors use Anthropic's shape
// (anthropic_error.h): 400 for bad input, 404 not_found_error for a model we do not serve,
// 503 overloaded_error (Retry-After) while loading or when the model is busy, 500 api_error
// otherwise. Validation happens before a stream starts, so those are plain JSON errors even with
// stream:true.
#pragma once

#include <memory>

#include "api/router.h"
#include "runtime/model_registry.h"

namespace cohort::api {

void add_anthropic_routes(Router& router, std::shared_ptr<runtime::ModelRegistry> models);

}  // namespace cohort::api
