// The head's pages and live figures for people and monitoring:
//   GET /dashboard            the dashboard (HTML; its script and style below); public
//   GET /dashboard/app.js     GET /dashboard/style.css
//   GET /v1/cluster           live_status_json.h: what the dashboard polls
//   GET /metrics              prometheus_metrics.h
// The page itself carries no data and is public; the JSON and /metrics need the API key
// when one is set (the page sends the key given in its URL fragment, #key=...).
// dashboard_page() is also what a browser gets at / (see add_api_routes).
#pragma once

#include "api/http_message.h"
#include "api/live_sources.h"
#include "api/router.h"

namespace cohort::api {

void add_dashboard_routes(Router& router, LiveSources sources);

HttpResponse dashboard_page();

}  // namespace cohort::api
