#include "api/prompt_check.h"

#include <string>

namespace cohort::api {

Result<int64_t> check_prompt(const runtime::Engine& engine,
                             const runtime::CompletionRequest& request) {
  if (!engine.ready()) return Status::unavailable("the model is still loading");
  Result<int64_t> n = engine.count_tokens(request.prompt, request.prompt_is_chat);
  if (!n.is_ok()) return n.status();
  if (*n == 0) return Status::invalid_argument("the prompt is empty");
  const int64_t n_ctx = engine.model_info().context_length;
  if (n_ctx > 0 && *n >= n_ctx) {
    return Status::out_of_range("the prompt has " + std::to_string(*n) +
                                " tokens; the context holds " + std::to_string(n_ctx));
  }
  return n;
}

int http_status_for(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kTimeout:  // the request ran past its --request-timeout
      return 504;
    default:
      return 500;
  }
}

}  // namespace cohort::api
