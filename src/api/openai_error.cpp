#include "api/openai_error.h"

#include <string>

#include <nlohmann/json.hpp>

#include "api/json_body.h"

namespace cohort::api {
namespace {

nlohmann::json string_or_null(std::string_view s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::string(s));
}

}  // namespace

HttpResponse openai_error(int status, std::string_view message, std::string_view param,
                          std::string_view code) {
  if (code.empty() && status == 401) code = "invalid_api_key";
  const char* type = status >= 500 ? "server_error" : "invalid_request_error";
  nlohmann::json body = {{"error",
                          {{"message", std::string(message)},
                           {"type", type},
                           {"param", string_or_null(param)},
                           {"code", string_or_null(code)}}}};
  HttpResponse res = json_response(status, body);
  if (status == 503) res.set_header("Retry-After", "1");
  return res;
}

}  // namespace cohort::api
