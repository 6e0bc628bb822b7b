// What every dialect checks before it commits to a response (a stream's 200 cannot be taken
// back): the engine is ready, the prompt is not empty and fits the context. Also the one
// mapping of engine Status codes to HTTP statuses.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "runtime/engine.h"

namespace cohort::api {

// The prompt's token count. kUnavailable while the engine is loading, kInvalidArgument for
// an empty prompt, kOutOfRange when it leaves no room in the context.
Result<int64_t> check_prompt(const runtime::Engine& engine,
                             const runtime::CompletionRequest& request);

// kInvalidArgument, kOutOfRange -> 400; kNotFound -> 404; kUnavailable -> 503; kTimeout -> 504;
// else 500.
int http_status_for(const Status& status);

}  // namespace cohort::api
