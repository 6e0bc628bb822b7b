#include "runtime/deadline_engine.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

namespace cohort::runtime {

Result<CompletionResult> DeadlineEngine::complete(const CompletionRequest& request) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms_);
  bool timed_out = false;
  CompletionRequest limited = request;
  limited.on_text = [&](std::string_view piece) {
    if (std::chrono::steady_clock::now() >= deadline) {
      timed_out = true;
      return false;
    }
    return request.on_text ? request.on_text(piece) : true;
  };
  Result<CompletionResult> result = inner_->complete(limited);
  if (timed_out) {
    char limit[32];
    std::snprintf(limit, sizeof(limit), "%g", static_cast<double>(limit_ms_) / 1000.0);
    return Status::timeout(std::string("the request ran past its time limit of ") + limit + " s");
  }
  return result;
}

}  // namespace cohort::runtime
