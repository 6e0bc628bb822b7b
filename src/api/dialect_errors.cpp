#include "api/dialect_errors.h"

#include "api/anthropic_error.h"
#include "api/ollama_error.h"
#include "api/openai_error.h"

namespace cohort::api {

HttpResponse dialect_error(std::string_view path, int status, std::string_view message) {
  if (path == "/v1/messages" || path.substr(0, 13) == "/v1/messages/") {
    return anthropic_error(status, message);
  }
  if (path == "/" || path.substr(0, 5) == "/api/") return ollama_error(status, message);
  return openai_error(status, message);
}

}  // namespace cohort::api
