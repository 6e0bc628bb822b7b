// Errors in Anthropic's shape:
//   {"type":"error","error":{"type":"invalid_request_error","message":"..."}}
// The error type follows the status: 400 invalid_request_error, 401 authentication_error,
// 403 permission_error, 404 not_found_error, 413 request_too_large, 429 rate_limit_error,
// 503 and 529 overloaded_error (503 with Retry-After), anything else api_error.
#pragma once

#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "api/http_message.h"

namespace cohort::api {

const char* anthropic_error_type(int status);
// The error body alone (also the data of a mid-stream `event: error`).
nlohmann::json anthropic_error_body(int status, std::string_view message);
HttpResponse anthropic_error(int status, std::string_view message);

}  // namespace cohort::api
