#include "api/router.h"

#include <algorithm>
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
    COHORT_CHECK_MSG(!(!r.prefix && r.method == method && r.path == path),
                     "router: route added twice");
  }
  routes_.push_back({std::move(method), std::move(path), std::move(handler), access, false});
}

void Router::add_prefix(std::string method, std::string prefix, HttpHandler handler,
                        RouteAccess access) {
  for (const Route& r : routes_) {
    COHORT_CHECK_MSG(!(r.prefix && r.method == method && r.path == prefix),
                     "router: prefix route added twice");
  }
  routes_.push_back({std::move(method), std::move(prefix), std::move(handler), access, true});
}

bool Router::matches(const Route& r, std::string_view path, bool prefix) const {
  if (r.prefix != prefix) return false;
  if (!prefix) return r.path == path;
  return path.size() > r.path.size() && path.substr(0, r.path.size()) == r.path;
}

void Router::set_error_formatter(ErrorFormatter formatter) {
  error_formatter_ = std::move(formatter);
}

void Router::set_observer(RequestObserver observer) { observer_ = std::move(observer); }

void Router::observe(const HttpRequest& req, const HttpResponse& res) const {
  if (observer_) observer_(req, res);
}

Router::Match Router::find(std::string_view method, std::string_view path) const {
  Match match;
  const Route* get_route = nullptr;
  const bool exact = std::any_of(routes_.begin(), routes_.end(),
                                 [&](const Route& r) { return matches(r, path, false); });
  for (const Route& r : routes_) {
    if (!matches(r, path, !exact)) continue;
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
