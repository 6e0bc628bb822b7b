#include "api/dispatch.h"

#include <exception>
#include <string>

#include "api/cors.h"
#include "core/log.h"

namespace cohort::api {
namespace {

bool same_key(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

HttpResponse route(const Router& router, std::string_view api_key, const HttpRequest& req) {
  if (req.method == "OPTIONS") return preflight_response(req);
  Router::Match match = router.find(req.method, req.path);
  if (!match.path_known) {
    return router.error(req.path, 404, "http: no route for " + req.method + " " + req.path);
  }
  if (match.handler == nullptr) {
    HttpResponse res =
        router.error(req.path, 405, "http: method " + req.method + " not allowed on " + req.path);
    res.set_header("Allow", match.allow + ", OPTIONS");
    return res;
  }
  if (match.access == RouteAccess::kApiKey && !api_key.empty() && !has_api_key(req, api_key)) {
    return router.error(req.path, 401, "http: missing or invalid API key");
  }
  try {
    return (*match.handler)(req);
  } catch (const std::exception& e) {
    COHORT_LOG_ERROR("http: handler for %s %s threw: %s", req.method.c_str(), req.path.c_str(),
                     e.what());
  } catch (...) {
    COHORT_LOG_ERROR("http: handler for %s %s threw", req.method.c_str(), req.path.c_str());
  }
  return router.error(req.path, 500, "http: internal error");
}

}  // namespace

bool has_api_key(const HttpRequest& req, std::string_view api_key) {
  if (std::optional<std::string_view> auth = req.header("authorization")) {
    std::string_view v = trim(*auth);
    if (v.size() > 7 && iequals(v.substr(0, 7), "bearer ") &&
        same_key(trim(v.substr(7)), api_key)) {
      return true;
    }
  }
  if (std::optional<std::string_view> key = req.header("x-api-key")) {
    if (same_key(trim(*key), api_key)) return true;
  }
  return false;
}

HttpResponse dispatch(const Router& router, std::string_view api_key, const HttpRequest& req) {
  HttpResponse res;
  try {
    res = route(router, api_key, req);
  } catch (...) {  // an error formatter or allocation failure: keep the no-throw contract
    res = text_response(500, "internal error\n");
  }
  add_cors_headers(req.header("origin"), res);
  try {
    router.observe(req, res);
  } catch (...) {  // observers must not throw; a metrics failure never fails the request
  }
  return res;
}

}  // namespace cohort::api
