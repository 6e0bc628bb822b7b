// OpenAI's POST /v1/chat/completions body, in and out, without HTTP or the engine.
//
// messages (required, non-empty): role system|developer|user|assistant|tool ("developer"
// is given to the template as "system", which templates know); content a string, null, or
// text parts ({type:"text",text}, joined with "\n"). Image, audio and file parts are
// refused with a 400 naming `messages` (the model reads text only). Other message fields
// (name, tool_call_id, tool_calls) pass through to the template unchanged.
// chat_template_kwargs (an object) become extra template variables. max_tokens absent
// means no limit. The sampling, stop, stream and refused fields are openai_sampling.h's.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "api/openai_sampling.h"
#include "api/tool_spec.h"
#include "core/status.h"
#include "runtime/engine.h"

namespace cohort::api {

struct ChatParams {
  std::string model;  // empty when the request named none
  runtime::ChatPrompt chat;
  runtime::CompletionRequest request;  // prompt unset: it comes from render_chat()
  StreamFlags stream;
  ToolSpec tools;
};

// kInvalidArgument with a message for the client and *error_param naming the field.
Result<ChatParams> parse_chat_request(const nlohmann::json& body, std::string* error_param);

// The chat.completion response object. With a tool format, calls in the text become
// message.tool_calls (finish_reason "tool_calls").
nlohmann::json chat_response(const std::string& id, int64_t created, const std::string& model,
                             const runtime::CompletionResult& result,
                             std::optional<ToolFormat> tools = std::nullopt);

// OpenAI's tool_calls array (ids "call_..."); with index fields for stream deltas.
nlohmann::json openai_tool_calls(const std::vector<ToolCall>& calls, bool with_index);

// One chat.completion.chunk with choices[0].delta = delta and finish_reason (null when
// nullptr); chat_usage_chunk() is the include_usage chunk (empty choices).
nlohmann::json chat_chunk(const std::string& id, int64_t created, const std::string& model,
                          nlohmann::json delta, const char* finish_reason);
nlohmann::json chat_usage_chunk(const std::string& id, int64_t created, const std::string& model,
                                const nlohmann::json& usage);

}  // namespace cohort::api
