// Anthropic's POST /v1/messages (and /v1/messages/count_tokens) body, in and out, without
// HTTP or the engine.
//
// Accepted: model (string, required), max_tokens (integer >= 1, required except for
// count_tokens), messages (required, non-empty; role user|assistant; content a string or
// blocks: text blocks are joined with "\n", thinking and redacted_thinking blocks of
// earlier turns are dropped), system (a string or text blocks), temperature [0, 1], top_p
// [0, 1], top_k (>= 0), stop_sequences (array of strings), stream (boolean), tools and
// tool_choice (api/tool_spec.h); assistant tool_use blocks and user tool_result blocks
// reach the template as tool_calls and "tool" messages. Refused with a 400: image,
// document and other non-text blocks, server tools. Every other field (metadata,
// thinking, context_management, ...) is ignored.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/tool_spec.h"
#include "core/status.h"
#include "runtime/engine.h"

namespace cohort::api {

struct MessagesParams {
  std::string model;
  runtime::ChatPrompt chat;
  runtime::CompletionRequest request;  // prompt unset: it comes from render_chat()
  bool stream = false;
  ToolSpec tools;
  std::optional<ToolFormat> tool_format;  // set by apply_tools() when tools are in play
};

// kInvalidArgument with a message naming the field. `count_only`: the count_tokens body
// (max_tokens not required).
Result<MessagesParams> parse_messages_request(const nlohmann::json& body, bool count_only);

// end_turn, max_tokens or stop_sequence.
const char* anthropic_stop_reason(const runtime::CompletionResult& result);

// The whole "message" response object; with a tool format, calls in the text become
// tool_use blocks (stop_reason "tool_use").
nlohmann::json messages_response(const std::string& id, const std::string& model,
                                 const runtime::CompletionResult& result,
                                 std::optional<ToolFormat> tools = std::nullopt);

// A tool_use content block (id "toolu_...").
nlohmann::json anthropic_tool_use(const ToolCall& call);

}  // namespace cohort::api
