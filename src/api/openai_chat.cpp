#include "api/openai_chat.h"

#include <utility>

#include "api/json_fields.h"
#include "api/openai_completion.h"
#include "api/request_id.h"

namespace cohort::api {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

Status bad_messages(std::string* param, const std::string& message) {
  return field_error(param, "messages", message);
}

Status content_text(const json& content, size_t i, std::string* out, std::string* param) {
  const std::string where = "messages[" + std::to_string(i) + "].content";
  if (content.is_null()) return Status::ok();
  if (content.is_string()) {
    *out = content.get<std::string>();
    return Status::ok();
  }
  if (!content.is_array()) {
    return bad_messages(param, "'" + where + "' must be a string, null or an array of parts");
  }
  for (const json& part : content) {
    if (part.is_string()) {  // lenient: some clients send bare strings
      if (!out->empty()) *out += "\n";
      *out += part.get<std::string>();
      continue;
    }
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string()) {
      return bad_messages(param, "each part of '" + where + "' must be an object with a type");
    }
    const std::string type = part["type"].get<std::string>();
    if (type != "text") {
      return bad_messages(param, "'" + where + "' parts of type '" + type +
                                     "' are not supported (the model reads text only)");
    }
    if (!part.contains("text") || !part["text"].is_string()) {
      return bad_messages(param, "a text part of '" + where + "' needs a string 'text'");
    }
    if (!out->empty()) *out += "\n";
    *out += part["text"].get<std::string>();
  }
  return Status::ok();
}

Status parse_openai_messages(const json& body, ordered_json* messages, std::string* param) {
  const json* m = field(body, "messages");
  if (m == nullptr) return bad_messages(param, "'messages' is required");
  if (!m->is_array() || m->empty()) {
    return bad_messages(param, "'messages' must be a non-empty array");
  }
  for (size_t i = 0; i < m->size(); ++i) {
    const json& msg = (*m)[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!msg.is_object()) return bad_messages(param, "'" + where + "' must be an object");
    if (!msg.contains("role") || !msg["role"].is_string()) {
      return bad_messages(param, "'" + where + ".role' must be a string");
    }
    std::string role = msg["role"].get<std::string>();
    if (msg.contains("tool_calls") && !msg["tool_calls"].is_null() &&
        !msg["tool_calls"].is_array()) {
      return bad_messages(param, "'" + where + ".tool_calls' must be an array");
    }
    if (role != "system" && role != "developer" && role != "user" && role != "assistant" &&
        role != "tool") {
      return bad_messages(param, "'" + where +
                                     ".role' must be one of system, developer, user, "
                                     "assistant, tool; got '" +
                                     role + "'");
    }
    if (role == "developer") role = "system";
    std::string text;
    COHORT_RETURN_IF_ERROR(content_text(msg.value("content", json()), i, &text, param));
    ordered_json out = ordered_json::object();
    out["role"] = role;
    out["content"] = text;
    for (auto it = msg.begin(); it != msg.end(); ++it) {
      if (it.key() != "role" && it.key() != "content") {
        out[it.key()] = ordered_json::parse(it.value().dump());
      }
    }
    if (out.contains("tool_calls")) tool_call_arguments_for_template(&out["tool_calls"]);
    messages->push_back(std::move(out));
  }
  return Status::ok();
}

}  // namespace

Result<ChatParams> parse_chat_request(const json& body, std::string* error_param) {
  ChatParams params;
  COHORT_RETURN_IF_ERROR(read_string(body, "model", &params.model, error_param));
  COHORT_RETURN_IF_ERROR(parse_stream_flags(body, &params.stream, error_param));
  COHORT_RETURN_IF_ERROR(refuse_openai_unsupported(body, /*chat=*/true, error_param));
  COHORT_RETURN_IF_ERROR(parse_openai_messages(body, &params.chat.messages, error_param));
  Result<ToolSpec> tools = parse_openai_tools(body, error_param);
  if (!tools.is_ok()) return tools.status();
  params.tools = std::move(tools).value();
  if (const json* kw = field(body, "chat_template_kwargs")) {
    if (!kw->is_object()) {
      return field_error(error_param, "chat_template_kwargs",
                         "'chat_template_kwargs' must be an object");
    }
    params.chat.extra = ordered_json::parse(kw->dump());
  }
  params.request.max_tokens = -1;  // absent: until the end of generation or the context
  params.request.prompt_is_chat = true;
  COHORT_RETURN_IF_ERROR(parse_openai_sampling(body, &params.request, error_param));
  return params;
}

json openai_tool_calls(const std::vector<ToolCall>& calls, bool with_index) {
  json out = json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    json c = {{"id", random_id("call_")},
              {"type", "function"},
              {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments.dump()}}}};
    if (with_index) c["index"] = i;
    out.push_back(std::move(c));
  }
  return out;
}

json chat_response(const std::string& id, int64_t created, const std::string& model,
                   const runtime::CompletionResult& result, std::optional<ToolFormat> tools) {
  json message = {{"role", "assistant"}, {"content", result.text}};
  const char* finish = openai_finish_reason(result);
  if (tools) {
    ParsedOutput p = parse_tool_output(*tools, result.text);
    if (!p.calls.empty()) {
      message["content"] = p.content.empty() ? json(nullptr) : json(p.content);
      message["tool_calls"] = openai_tool_calls(p.calls, /*with_index=*/false);
      finish = "tool_calls";
    }
  }
  json choice = {{"index", 0},
                 {"message", std::move(message)},
                 {"logprobs", nullptr},
                 {"finish_reason", finish}};
  return {{"id", id},
          {"object", "chat.completion"},
          {"created", created},
          {"model", model},
          {"choices", json::array({std::move(choice)})},
          {"usage", openai_usage(result)}};
}

json chat_chunk(const std::string& id, int64_t created, const std::string& model, json delta,
                const char* finish_reason) {
  json choice = {{"index", 0},
                 {"delta", std::move(delta)},
                 {"logprobs", nullptr},
                 {"finish_reason", finish_reason ? json(finish_reason) : json(nullptr)}};
  return {{"id", id},
          {"object", "chat.completion.chunk"},
          {"created", created},
          {"model", model},
          {"choices", json::array({std::move(choice)})}};
}

json chat_usage_chunk(const std::string& id, int64_t created, const std::string& model,
                      const json& usage) {
  return {{"id", id},       {"object", "chat.completion.chunk"}, {"created", created},
          {"model", model}, {"choices", json::array()},          {"usage", usage}};
}

}  // namespace cohort::api
