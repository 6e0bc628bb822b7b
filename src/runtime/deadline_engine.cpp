#include "runtime/deadline_engine.h"

#include <chrono>
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
    return Status::timeout("the request ran past its time limit of " +
                           std::to_string(limit_ms_ / 1000.0).substr(0, 6) + " s");
  }
  return result;
}

}  // namespace cohort::runtime
