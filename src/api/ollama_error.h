// Errors in Ollama's shape: {"error":"<message>"} with the given status (400, 404, 500,
// 503 with Retry-After).
#pragma once

#include <string_view>

#include "api/http_message.h"

namespace cohort::api {

HttpResponse ollama_error(int status, std::string_view message);

}  // namespace cohort::api
