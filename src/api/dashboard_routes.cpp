#include "api/dashboard_routes.h"

#include <memory>
#include <string>
#include <utility>

#include "api/json_body.h"
#include "api/live_status_json.h"
#include "api/prometheus_metrics.h"
#include "api/web_assets.h"

// Handlers here may throw only on allocation failure; dispatch() turns that into a 500.
namespace cohort::api {
namespace {

HttpResponse asset(std::string_view body, const char* content_type) {
  HttpResponse r = text_response(200, std::string(body), content_type);
  r.set_header("Cache-Control", "no-cache");
  return r;
}

}  // namespace

HttpResponse dashboard_page() { return asset(web::dashboard_html(), "text/html; charset=utf-8"); }

void add_dashboard_routes(Router& router, LiveSources sources) {
  auto src = std::make_shared<const LiveSources>(std::move(sources));
  router.add(
      "GET", "/dashboard", [](const HttpRequest&) { return dashboard_page(); },
      RouteAccess::kPublic);
  router.add(
      "GET", "/dashboard/app.js",
      [](const HttpRequest&) {
        return asset(web::dashboard_js(), "text/javascript; charset=utf-8");
      },
      RouteAccess::kPublic);
  router.add(
      "GET", "/dashboard/style.css",
      [](const HttpRequest&) { return asset(web::dashboard_css(), "text/css; charset=utf-8"); },
      RouteAccess::kPublic);
  router.add("GET", "/v1/cluster", [src](const HttpRequest&) {
    HttpResponse r = json_response(200, live_status_json(*src));
    r.set_header("Cache-Control", "no-store");
    return r;
  });
  router.add("GET", "/metrics", [src](const HttpRequest&) {
    return text_response(200, prometheus_text(*src), "text/plain; version=0.0.4; charset=utf-8");
  });
}

}  // namespace cohort::api
