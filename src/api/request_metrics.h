// Counts HTTP requests by dialect, route and outcome for /metrics. Fed by the Router's
// observer (router.h); routes are the paths the server knows, so the label set stays small
// (an unknown path counts as route "other").
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "api/http_message.h"

namespace cohort::api {

struct RequestKey {
  std::string dialect;  // openai | anthropic | ollama | cluster | dashboard | other
  std::string route;    // the path, e.g. /v1/chat/completions; "other" when unknown
  std::string outcome;  // ok (2xx/3xx) | client_error (4xx) | server_error (5xx)
  auto operator<=>(const RequestKey&) const = default;
};

// Which dialect a path belongs to.
std::string dialect_of(std::string_view path);

class RequestMetrics {
 public:
  void record(const HttpRequest& req, const HttpResponse& res);
  std::map<RequestKey, int64_t> counts() const;

 private:
  mutable std::mutex mu_;
  std::map<RequestKey, int64_t> counts_;
};

}  // namespace cohort::api
