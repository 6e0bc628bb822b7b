// Anthropic's POST /v1/messages (and /v1/messages/count_tokens) body, in and out, without
// HTTP or the engine.
//
// Accepted: model (string, required), max_tokens (integer >= 1, required except for
// count_tokens), messages (required, non-empty; role user|assistant; content a string or
// blocks: text blocks are joined with "\n", thinking and redacted_thinking blocks of
// earlier turns are dropped), system (a string or text blocks), temperature [0, 1], top_p
// [0, 1], top_k (>= 0), stop_sequences (array of strings), stream (boolean). Refused with
// a 400: image, document, tool_use, tool_result and other non-text blocks, non-empty
// tools, tool_choice other than auto/none. Every other field (metadata, thinking,
// context_management, ...) is ignored.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "runtime/engine.h"

namespace cohort::api {

struct MessagesParams {
  std::string model;
  runtime::ChatPrompt chat;
  runtime::CompletionRequest request;  // prompt unset: it comes from render_chat()
  bool stream = false;
};

// kInvalidArgument with a message naming the field. `count_only`: the count_tokens body
// (max_tokens not required).
Result<MessagesParams> parse_messages_request(const nlohmann::json& body, bool count_only);

// end_turn, max_tokens or stop_sequence.
const char* anthropic_stop_reason(const runtime::CompletionResult& result);

// The whole "message" response object.
nlohmann::json messages_response(const std::string& id, const std::string& model,
                                 const runtime::CompletionResult& result);

}  // namespace cohort::api
