#include "api/ollama_error.h"

#include <string>

#include <nlohmann/json.hpp>

#include "api/json_body.h"

namespace cohort::api {

HttpResponse ollama_error(int status, std::string_view message) {
  HttpResponse res = json_response(status, {{"error", std::string(message)}});
  if (status == 503) res.set_header("Retry-After", "1");
  return res;
}

}  // namespace cohort::api
