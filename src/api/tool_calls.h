// Tool calls in generated text. A model announces a call in its family's own format:
//   kHermes        Qwen 2.5 / Hermes:  <tool_call>{"name": ..., "arguments": {...}}</tool_call>
//   kQwen3Coder    Qwen3-Coder:        <tool_call><function=NAME><parameter=P>V</parameter>
//                                      </function></tool_call>
//   kMistral       Mistral:            [TOOL_CALLS][{"name": ..., "arguments": {...}}] or
//                                      [TOOL_CALLS]NAME[ARGS]{...}
//   kLlama3Json    Llama 3.1+:         [<|python_tag|>]{"name": ..., "parameters": {...}}
// The format is told by the model's chat template (detect_tool_format). When a request
// forces a call (tool_choice "required", "any" or a named tool) decoding is constrained to
// the shape text::OutputConstraint::tool_call() writes, whatever the family (kForced).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace cohort::api {

enum class ToolFormat { kHermes, kQwen3Coder, kMistral, kLlama3Json, kForced };

// The family of the chat template's tool-call syntax; kHermes when the template shows none
// (the most common format, and harmless: plain text never contains its marker).
ToolFormat detect_tool_format(std::string_view chat_template);

struct ToolCall {
  std::string name;
  nlohmann::json arguments = nlohmann::json::object();  // an object
};

struct ParsedOutput {
  std::string content;  // the text outside the calls (trimmed)
  std::vector<ToolCall> calls;
};

// Splits generated text into content and calls. Text that looks like a call but does not
// parse stays content (a client sees what the model wrote rather than nothing).
ParsedOutput parse_tool_output(ToolFormat format, std::string_view text);

// Streaming: the text that may be shown as content as it arrives. Everything from the start
// of a call marker on is held back (and a tail that could still become a marker), so a
// client never sees half a call as text; finish() parses the whole.
class ToolStreamFilter {
 public:
  explicit ToolStreamFilter(ToolFormat format) : format_(format) {}
  // The content to stream now for a newly generated piece (maybe empty).
  std::string push(std::string_view piece);
  // The parse of everything pushed, and in `*unsent` the content not streamed yet.
  ParsedOutput finish(std::string* unsent) const;

 private:
  ToolFormat format_;
  std::string text_;      // everything pushed
  size_t sent_ = 0;       // bytes of text_ streamed as content
  bool holding_ = false;  // a call has begun: nothing more is streamed
};

}  // namespace cohort::api
