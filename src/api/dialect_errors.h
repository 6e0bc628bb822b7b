// Errors the server raises itself (404, 405, 401, 413, malformed requests) in the shape of
// the dialect that owns the path: Anthropic's under /v1/messages, Ollama's under /api/ and
// at /, OpenAI's everywhere else. Install with Router::set_error_formatter.
#pragma once

#include <string_view>

#include "api/http_message.h"

namespace cohort::api {

HttpResponse dialect_error(std::string_view path, int status, std::string_view message);

}  // namespace cohort::api
