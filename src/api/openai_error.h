// Errors in OpenAI's shape:
//   {"error":{"message":"...","type":"invalid_request_error","param":null,"code":null}}
// The type follows the status: 4xx invalid_request_error, 5xx server_error; 401 gets code
// "invalid_api_key" unless another is given; 503 carries Retry-After.
#pragma once

#include <string_view>

#include "api/http_message.h"

namespace cohort::api {

// `param` and `code` become JSON null when empty.
HttpResponse openai_error(int status, std::string_view message, std::string_view param = {},
                          std::string_view code = {});

}  // namespace cohort::api
