// OpenAI's legacy POST /v1/completions body, in and out, without HTTP or the engine:
// parse_completion_request() validates a request body into a runtime::CompletionRequest;
// completion_response() and completion_chunk() build the response objects.
//
// Accepted: model (string), prompt (a string, or an array of one string), max_tokens
// (default 16, as OpenAI's), the shared sampling, stop and stream fields
// (api/openai_sampling.h). Token-array prompts and several prompts at once are refused
// with a 400 naming `prompt`; see openai_sampling.h for the other refused fields.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "api/openai_sampling.h"
#include "core/status.h"
#include "runtime/engine.h"

namespace cohort::api {

struct CompletionParams {
  std::string model;  // empty when the request named none
  runtime::CompletionRequest request;
  StreamFlags stream;
};

// kInvalidArgument with a message for the client; `*error_param` is then set to the
// offending field's name.
Result<CompletionParams> parse_completion_request(const nlohmann::json& body,
                                                  std::string* error_param);

// The text_completion response object.
nlohmann::json completion_response(const std::string& id, int64_t created, const std::string& model,
                                   const runtime::CompletionResult& result);

// One streamed text_completion chunk: choices[0].text = text, finish_reason null unless
// given. The usage chunk (empty choices) is completion_usage_chunk().
nlohmann::json completion_chunk(const std::string& id, int64_t created, const std::string& model,
                                const std::string& text, const char* finish_reason);
nlohmann::json completion_usage_chunk(const std::string& id, int64_t created,
                                      const std::string& model, const nlohmann::json& usage);

// {"prompt_tokens","completion_tokens","total_tokens"}.
nlohmann::json openai_usage(const runtime::CompletionResult& result);

}  // namespace cohort::api
