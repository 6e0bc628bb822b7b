#include "api/request_metrics.h"

namespace cohort::api {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::string dialect_of(std::string_view path) {
  if (starts_with(path, "/v1/messages")) return "anthropic";
  if (starts_with(path, "/v1/cluster")) return "cluster";
  if (starts_with(path, "/v1/")) return "openai";
  if (starts_with(path, "/api/") || path == "/") return "ollama";
  if (starts_with(path, "/dashboard") || path == "/metrics") return "dashboard";
  return "other";
}

void RequestMetrics::record(const HttpRequest& req, const HttpResponse& res) {
  RequestKey key;
  key.dialect = dialect_of(req.path);
  // 404 and 405 are raised for paths nobody routes; their paths would grow the label set
  // without bound.
  key.route = res.status == 404 || res.status == 405 || key.dialect == "other" ? "other" : req.path;
  key.outcome = res.status >= 500 ? "server_error" : res.status >= 400 ? "client_error" : "ok";
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[key];
}

std::map<RequestKey, int64_t> RequestMetrics::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

}  // namespace cohort::api
