#include "api/cors.h"

#include <string>

namespace cohort::api {

void add_cors_headers(std::optional<std::string_view> origin, HttpResponse& res) {
  if (origin && !origin->empty()) {
    res.set_header("Access-Control-Allow-Origin", std::string(*origin));
    res.set_header("Vary", "Origin");
  } else {
    res.set_header("Access-Control-Allow-Origin", "*");
  }
}

HttpResponse preflight_response(const HttpRequest& req) {
  HttpResponse res;
  res.status = 204;
  res.content_type.clear();
  res.set_header("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
  std::optional<std::string_view> asked = req.header("access-control-request-headers");
  if (asked && !asked->empty()) {
    res.set_header("Access-Control-Allow-Headers", std::string(*asked));
  } else {
    res.set_header("Access-Control-Allow-Headers",
                   "Authorization, Content-Type, x-api-key, anthropic-version, anthropic-beta, "
                   "OpenAI-Organization, OpenAI-Project");
  }
  res.set_header("Access-Control-Max-Age", "86400");
  add_cors_headers(req.header("origin"), res);
  return res;
}

}  // namespace cohort::api
