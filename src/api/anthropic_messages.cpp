#include "api/anthropic_messages.h"

#include <limits>
#include <utility>

#include "api/json_fields.h"

namespace cohort::api {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// Joins the text of `blocks` (a string or an array of blocks) into *out. `where` names the
// field in messages.
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
                                      "' are not supported (text only)");
    }
    if (!b.contains("text") || !b["text"].is_string()) {
      return Status::invalid_argument(where + ": a text block needs a string 'text'");
    }
    if (!out->empty()) *out += "\n";
    *out += b["text"].get<std::string>();
  }
  return Status::ok();
}

Status parse_messages(const json& body, ordered_json* messages) {
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
    std::string text;
    COHORT_RETURN_IF_ERROR(blocks_text(msg["content"], where + ".content", &text));
    messages->push_back({{"role", role.get<std::string>()}, {"content", text}});
  }
  return Status::ok();
}

Status refuse_tools(const json& body) {
  if (const json* tools = field(body, "tools"); tools != nullptr && !tools->empty()) {
    return Status::invalid_argument("tools: tool use is not supported by this server");
  }
  if (const json* choice = field(body, "tool_choice")) {
    const json type = choice->is_object() ? choice->value("type", json()) : json();
    if (type != "auto" && type != "none") {
      return Status::invalid_argument(
          "tool_choice: only {\"type\":\"auto\"} or "
          "{\"type\":\"none\"} are supported (no tools)");
    }
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
  COHORT_RETURN_IF_ERROR(refuse_tools(body));
  COHORT_RETURN_IF_ERROR(parse_messages(body, &p.chat.messages));
  p.request.prompt_is_chat = true;
  return p;
}

const char* anthropic_stop_reason(const runtime::CompletionResult& result) {
  if (result.finish_reason == "length") return "max_tokens";
  if (!result.stop_sequence.empty()) return "stop_sequence";
  return "end_turn";
}

json messages_response(const std::string& id, const std::string& model,
                       const runtime::CompletionResult& result) {
  json content = json::array();
  content.push_back({{"type", "text"}, {"text", result.text}});
  return {
      {"id", id},
      {"type", "message"},
      {"role", "assistant"},
      {"model", model},
      {"content", std::move(content)},
      {"stop_reason", anthropic_stop_reason(result)},
      {"stop_sequence", result.stop_sequence.empty() ? json(nullptr) : json(result.stop_sequence)},
      {"usage",
       {{"input_tokens", result.prompt_tokens}, {"output_tokens", result.completion_tokens}}}};
}

}  // namespace cohort::api
