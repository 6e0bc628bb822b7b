// The request fields /v1/chat/completions and /v1/completions share: sampling, limits,
// stop strings, streaming, and the fields we refuse.
//
// Sampling: temperature [0, 2], top_p [0, 1], seed (integer), presence_penalty and
// frequency_penalty [-2, 2], and the llama.cpp extensions top_k (>= 0), min_p [0, 1],
// repeat_penalty (>= 0) and repeat_last_n (>= 0). Limits: max_tokens and
// max_completion_tokens (integers >= 0; the same thing; when both are set the smaller
// wins). stop: a string or an array of strings. stream: a boolean; stream_options
// {include_usage: bool}.
//
// Refused with a 400 naming the field, because answering would silently be wrong: n and
// best_of other than 1, logprobs (true or > 0), top_logprobs > 0, echo, a non-empty suffix,
// a non-empty logit_bias, non-empty functions (the legacy form of tools), function_call
// other than "none" or "auto", tools on /v1/completions, response_format other than
// {"type":"text"} or {"type":"json_object"} (decoded under a JSON constraint), audio,
// modalities other than ["text"], prediction. Null or the default value of any of them is accepted:
// SDKs send those. Every other field is ignored.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "runtime/engine.h"

namespace cohort::api {

struct StreamFlags {
  bool stream = false;
  bool include_usage = false;
};

// Fills the sampling fields, max_tokens and stop of *req (leaving defaults for the absent).
Status parse_openai_sampling(const nlohmann::json& body, runtime::CompletionRequest* req,
                             std::string* param);
Status parse_stream_flags(const nlohmann::json& body, StreamFlags* flags, std::string* param);
// chat: tools and tool_choice are read by the chat endpoint (api/tool_spec.h).
Status refuse_openai_unsupported(const nlohmann::json& body, bool chat, std::string* param);

// The engine's finish reason in OpenAI's words: "length" or "stop".
const char* openai_finish_reason(const runtime::CompletionResult& result);

}  // namespace cohort::api
