// CORS, as browsers and the SDKs' browser builds need it: every response, errors and
// streams included, carries Access-Control-Allow-Origin (the request's Origin echoed, or *),
// and an OPTIONS preflight to any path gets 204 with the allowed methods and headers.
#pragma once

#include <optional>
#include <string_view>

#include "api/http_message.h"

namespace cohort::api {

// Adds the CORS headers every response carries. `origin` is the request's Origin header.
void add_cors_headers(std::optional<std::string_view> origin, HttpResponse& res);

// The answer to an OPTIONS preflight: 204 with Allow-Methods GET, POST, DELETE, OPTIONS and
// Allow-Headers echoing Access-Control-Request-Headers (the * wildcard would not cover
// Authorization) or, when absent, naming the headers our clients send.
HttpResponse preflight_response(const HttpRequest& req);

}  // namespace cohort::api
