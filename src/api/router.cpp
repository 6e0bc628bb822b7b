#include "api/router.h"

#include <utility>

#include "api/openai_error.h"
#include "core/check.h"

namespace cohort::api {

Router::Router()
    : error_formatter_([](std::string_view, int status, std::string_view message) {
        return openai_error(status, message);
      }) {}

void Router::add(std::string method, std::string path, HttpHandler handler, RouteAccess access) {
  for (const Route& r : routes_) {
    COHORT_CHECK_MSG(!(r.method == method && r.path == path), "router: route added twice");
  }
  routes_.push_back({std::move(method), std::move(path), std::move(handler), access});
}

void Router::set_error_formatter(ErrorFormatter formatter) {
  error_formatter_ = std::move(formatter);
}

Router::Match Router::find(std::string_view method, std::string_view path) const {
  Match match;
  const Route* get_route = nullptr;
  for (const Route& r : routes_) {
    if (r.path != path) continue;
    match.path_known = true;
    if (!match.allow.empty()) match.allow += ", ";
    match.allow += r.method;
    if (r.method == method) {
      match.handler = &r.handler;
      match.access = r.access;
    }
    if (r.method == "GET") get_route = &r;
  }
  if (match.handler == nullptr && method == "HEAD" && get_route != nullptr) {
    match.handler = &get_route->handler;
    match.access = get_route->access;
  }
  return match;
}

HttpResponse Router::error(std::string_view path, int status, std::string_view message) const {
  return error_formatter_(path, status, message);
}

}  // namespace cohort::api
