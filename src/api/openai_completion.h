// OpenAI's legacy POST /v1/completions body, in and out, without HTTP or the engine:
// parse_completion_request() validates a request body into a runtime::CompletionRequest;
// completion_response() builds the response object.
//
// Accepted: model (string), prompt (a string, or an array of one string), max_tokens
// (integer >= 0, default 16; null = default), temperature (0..2), top_p (0..1), top_k
// (integer >= 0, an extension), seed (integer), stop (a string or an array of strings),
// stream (false; true is refused until streaming exists). Fields we cannot honour (n or
// best_of other than 1, echo, logprobs, suffix, token-array prompts) are refused with a
// 400 naming them, never silently ignored. Any other field is ignored; null means absent.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/status.h"
#include "runtime/engine.h"

namespace cohort::api {

struct CompletionParams {
  std::string model;  // empty when the request named none
  runtime::CompletionRequest request;
};

// kInvalidArgument with a message for the client; `*error_param` is then set to the
// offending field's name.
Result<CompletionParams> parse_completion_request(const nlohmann::json& body,
                                                  std::string* error_param);

// The text_completion response object. `finish_reason` from the engine is normalised to
// "stop" or "length".
nlohmann::json completion_response(const std::string& id, int64_t created, const std::string& model,
                                   const runtime::CompletionResult& result);

}  // namespace cohort::api
