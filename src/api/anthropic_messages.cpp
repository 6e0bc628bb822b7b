#include "api/anthropic_messages.h"

#include <limits>
#include <utility>

#include "api/json_fields.h"
#include "api/request_id.h"

namespace cohort::api {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// The text of a string or of text blocks, joined with "\n" (thinking blocks of earlier
// turns are dropped). `where` names the field in messages.
Status blocks_text(const json& blocks, const std::string& where, std::string* out) {
  if (blocks.is_string()) {
    *out = blocks.get<std::string>();
    return Status::ok();
  }
  if (!blocks.is_array()) {
    return Status::invalid_argument(where + ": must be a string or an array of content blocks");
  }
  for (const json& b : blocks) {
    if (!b.is_object() || !b.contains("type") || !b["type"].is_string()) {
      return Status::invalid_argument(where + ": each content block needs a string 'type'");
    }
    const std::string type = b["type"].get<std::string>();
    if (type == "thinking" || type == "redacted_thinking") continue;
    if (type != "text") {
      return Status::invalid_argument(where + ": content blocks of type '" + type +
                                      "' are not supported here");
    }
    if (!b.contains("text") || !b["text"].is_string()) {
      return Status::invalid_argument(where + ": a text block needs a string 'text'");
    }
    if (!out->empty()) *out += "\n";
    *out += b["text"].get<std::string>();
  }
  return Status::ok();
}

// One Anthropic message as template messages: tool_result blocks become "tool" messages
// (before the user's text, which follows them), tool_use blocks the assistant's tool_calls.
Status add_message(const json& msg, const std::string& where, ordered_json* messages) {
  const std::string role = msg["role"].get<std::string>();
  const json& content = msg["content"];
  json text_blocks = json::array();
  ordered_json calls = ordered_json::array();
  if (content.is_array()) {
    for (size_t j = 0; j < content.size(); ++j) {
      const json& b = content[j];
      const std::string at = where + ".content." + std::to_string(j);
      const json type = b.is_object() ? b.value("type", json()) : json();
      if (type == "tool_use" && role == "assistant") {
        if (!b.contains("name") || !b["name"].is_string() ||
            !b.value("input", json()).is_object()) {
          return Status::invalid_argument(at +
                                          ": tool_use needs a string name and an object input");
        }
        calls.push_back(
            {{"id", b.value("id", std::string())},
             {"type", "function"},
             {"function",
              {{"name", b["name"]}, {"arguments", ordered_json::parse(b["input"].dump())}}}});
      } else if (type == "tool_result" && role == "user") {
        std::string result;
        if (b.contains("content"))
          COHORT_RETURN_IF_ERROR(blocks_text(b["content"], at + ".content", &result));
        messages->push_back({{"role", "tool"},
                             {"tool_call_id", b.value("tool_use_id", std::string())},
                             {"content", result}});
      } else {
        text_blocks.push_back(b);
      }
    }
  } else {
    text_blocks = content;
  }
  std::string text;
  COHORT_RETURN_IF_ERROR(blocks_text(text_blocks, where + ".content", &text));
  if (text.empty() && calls.empty() && content.is_array() && !content.empty()) return Status::ok();
  ordered_json out = {{"role", role}, {"content", text}};
  if (!calls.empty()) out["tool_calls"] = std::move(calls);
  messages->push_back(std::move(out));
  return Status::ok();
}

Status parse_anthropic_messages(const json& body, ordered_json* messages) {
  if (const json* system = field(body, "system")) {
    std::string text;
    COHORT_RETURN_IF_ERROR(blocks_text(*system, "system", &text));
    if (!text.empty()) messages->push_back({{"role", "system"}, {"content", text}});
  }
  const json* m = field(body, "messages");
  if (m == nullptr) return Status::invalid_argument("messages: field required");
  if (!m->is_array() || m->empty()) {
    return Status::invalid_argument("messages: must be a non-empty array");
  }
  for (size_t i = 0; i < m->size(); ++i) {
    const json& msg = (*m)[i];
    const std::string where = "messages." + std::to_string(i);
    if (!msg.is_object()) return Status::invalid_argument(where + ": must be an object");
    const json role = msg.value("role", json());
    if (role != "user" && role != "assistant") {
      return Status::invalid_argument(where + ".role: must be \"user\" or \"assistant\"");
    }
    if (!msg.contains("content")) return Status::invalid_argument(where + ".content: required");
    COHORT_RETURN_IF_ERROR(add_message(msg, where, messages));
  }
  return Status::ok();
}

}  // namespace

Result<MessagesParams> parse_messages_request(const json& body, bool count_only) {
  MessagesParams p;
  std::string param;
  const json* model = field(body, "model");
  if (model == nullptr) return Status::invalid_argument("model: field required");
  COHORT_RETURN_IF_ERROR(read_string(body, "model", &p.model, &param));
  int64_t max_tokens = -1;
  COHORT_RETURN_IF_ERROR(
      read_int(body, "max_tokens", 1, std::numeric_limits<int64_t>::max(), &max_tokens, &param));
  if (max_tokens < 0 && !count_only) return Status::invalid_argument("max_tokens: field required");
  p.request.max_tokens = max_tokens;
  COHORT_RETURN_IF_ERROR(read_bool(body, "stream", &p.stream, &param));
  COHORT_RETURN_IF_ERROR(read_float(body, "temperature", 0, 1, &p.request.temperature, &param));
  COHORT_RETURN_IF_ERROR(read_float(body, "top_p", 0, 1, &p.request.top_p, &param));
  int64_t top_k = 0;
  COHORT_RETURN_IF_ERROR(
      read_int(body, "top_k", 0, std::numeric_limits<int32_t>::max(), &top_k, &param));
  p.request.top_k = static_cast<int32_t>(top_k);
  COHORT_RETURN_IF_ERROR(
      read_stop(body, "stop_sequences", /*allow_string=*/false, &p.request.stop, &param));
  Result<ToolSpec> tools = parse_anthropic_tools(body);
  if (!tools.is_ok()) return tools.status();
  p.tools = std::move(tools).value();
  COHORT_RETURN_IF_ERROR(parse_anthropic_messages(body, &p.chat.messages));
  p.request.prompt_is_chat = true;
  return p;
}

const char* anthropic_stop_reason(const runtime::CompletionResult& result) {
  if (result.finish_reason == "length") return "max_tokens";
  if (!result.stop_sequence.empty()) return "stop_sequence";
  return "end_turn";
}

json anthropic_tool_use(const ToolCall& call) {
  return {{"type", "tool_use"},
          {"id", random_id("toolu_")},
          {"name", call.name},
          {"input", call.arguments}};
}

json messages_response(const std::string& id, const std::string& model,
                       const runtime::CompletionResult& result, std::optional<ToolFormat> tools) {
  json content = json::array();
  const char* stop_reason = anthropic_stop_reason(result);
  ParsedOutput parsed{result.text, {}};
  if (tools) parsed = parse_tool_output(*tools, result.text);
  if (parsed.calls.empty()) parsed.content = result.text;
  if (!parsed.content.empty() || parsed.calls.empty()) {
    content.push_back({{"type", "text"}, {"text", parsed.content}});
  }
  for (const ToolCall& c : parsed.calls) content.push_back(anthropic_tool_use(c));
  if (!parsed.calls.empty()) stop_reason = "tool_use";
  return {
      {"id", id},
      {"type", "message"},
      {"role", "assistant"},
      {"model", model},
      {"content", std::move(content)},
      {"stop_reason", stop_reason},
      {"stop_sequence", result.stop_sequence.empty() ? json(nullptr) : json(result.stop_sequence)},
      {"usage",
       {{"input_tokens", result.prompt_tokens}, {"output_tokens", result.completion_tokens}}}};
}

}  // namespace cohort::api
