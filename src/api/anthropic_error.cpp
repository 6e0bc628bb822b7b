#include "api/anthropic_error.h"

#include <string>

#include <nlohmann/json.hpp>

#include "api/json_body.h"

namespace cohort::api {

const char* anthropic_error_type(int status) {
  switch (status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    default:
      return status >= 400 && status < 500 ? "invalid_request_error" : "api_error";
  }
}

nlohmann::json anthropic_error_body(int status, std::string_view message) {
  return {{"type", "error"},
          {"error", {{"type", anthropic_error_type(status)}, {"message", std::string(message)}}}};
}

HttpResponse anthropic_error(int status, std::string_view message) {
  HttpResponse res = json_response(status, anthropic_error_body(status, message));
  if (status == 503) res.set_header("Retry-After", "1");
  return res;
}

}  // namespace cohort::api
