// From a parsed request to a response, without the network: OPTIONS preflight, routing
// (404, 405 with Allow), the API-key check (401) and the handler call, with every escaped
// exception turned into a 500. CORS headers are on whatever comes back.
#pragma once

#include <string_view>

#include "api/http_message.h"
#include "api/router.h"

namespace cohort::api {

// `api_key` empty: no key required. Never throws.
HttpResponse dispatch(const Router& router, std::string_view api_key, const HttpRequest& req);

// True when the request carries `api_key` as `Authorization: Bearer <key>` or
// `x-api-key: <key>`. Compares in time independent of where the keys differ.
bool has_api_key(const HttpRequest& req, std::string_view api_key);

}  // namespace cohort::api
