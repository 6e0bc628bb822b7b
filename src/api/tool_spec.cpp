#include "api/tool_spec.h"

#include <algorithm>
#include <utility>

#include "api/json_fields.h"

namespace cohort::api {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

Status bad(std::string* param, const char* name, std::string message) {
  if (param != nullptr) *param = name;
  return Status::invalid_argument(std::move(message));
}

// OpenAI/Ollama tool objects, validated, into spec->tools and spec->names.
Status read_function_tools(const json& tools, const char* field_name, std::string* param,
                           ToolSpec* spec) {
  const std::string where = field_name;
  if (!tools.is_array()) return bad(param, field_name, "'" + where + "' must be an array");
  spec->tools = ordered_json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const json& t = tools[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (!t.is_object() || t.value("type", std::string("function")) != "function") {
      return bad(param, field_name, "'" + at + "' must be {\"type\":\"function\",...}");
    }
    const json fn = t.value("function", json());
    if (!fn.is_object() || !fn.contains("name") || !fn["name"].is_string() ||
        fn["name"].get<std::string>().empty()) {
      return bad(param, field_name, "'" + at + ".function.name' must be a non-empty string");
    }
    if (fn.contains("parameters") && !fn["parameters"].is_object()) {
      return bad(param, field_name, "'" + at + ".function.parameters' must be an object");
    }
    spec->names.push_back(fn["name"].get<std::string>());
    spec->tools.push_back({{"type", "function"}, {"function", ordered_json::parse(fn.dump())}});
  }
  return Status::ok();
}

Status require_offered(const ToolSpec& spec, const std::string& name, std::string* param,
                       const char* field_name) {
  if (std::find(spec.names.begin(), spec.names.end(), name) != spec.names.end()) {
    return Status::ok();
  }
  return bad(param, field_name,
             "'" + std::string(field_name) + "' names '" + name + "', which is not in 'tools'");
}

}  // namespace

Result<ToolSpec> parse_openai_tools(const json& body, std::string* param) {
  ToolSpec spec;
  const json* tools = field(body, "tools");
  if (tools != nullptr && !(tools->is_array() && tools->empty())) {
    COHORT_RETURN_IF_ERROR(read_function_tools(*tools, "tools", param, &spec));
    spec.choice = ToolChoice::kAuto;
  }
  const json* choice = field(body, "tool_choice");
  if (choice == nullptr) return spec;
  if (choice->is_string()) {
    const std::string c = choice->get<std::string>();
    if (c == "none") {
      spec.choice = ToolChoice::kNone;
    } else if (c == "required") {
      if (spec.names.empty()) return bad(param, "tool_choice", "'required' needs 'tools'");
      spec.choice = ToolChoice::kRequired;
    } else if (c != "auto") {
      return bad(param, "tool_choice", "'tool_choice' must be none, auto, required or a tool");
    }
    return spec;
  }
  const json fn = choice->is_object() ? choice->value("function", json()) : json();
  if (!fn.is_object() || !fn.contains("name") || !fn["name"].is_string()) {
    return bad(param, "tool_choice",
               "'tool_choice' must be none, auto, required or "
               "{\"type\":\"function\",\"function\":{\"name\":...}}");
  }
  const std::string name = fn["name"].get<std::string>();
  COHORT_RETURN_IF_ERROR(require_offered(spec, name, param, "tool_choice"));
  spec.choice = ToolChoice::kRequired;
  spec.names = {name};
  return spec;
}

Result<ToolSpec> parse_anthropic_tools(const json& body) {
  ToolSpec spec;
  if (const json* tools = field(body, "tools"); tools != nullptr && !tools->empty()) {
    if (!tools->is_array()) return Status::invalid_argument("tools: must be an array");
    spec.tools = ordered_json::array();
    for (size_t i = 0; i < tools->size(); ++i) {
      const json& t = (*tools)[i];
      const std::string at = "tools." + std::to_string(i);
      if (!t.is_object() || !t.contains("name") || !t["name"].is_string()) {
        return Status::invalid_argument(at + ".name: field required");
      }
      if (t.contains("type") && t["type"] != "custom") {
        return Status::invalid_argument(at + ".type: server tools ('" + t["type"].dump() +
                                        "') are not supported");
      }
      const json schema = t.value("input_schema", json::object());
      if (!schema.is_object()) return Status::invalid_argument(at + ".input_schema: an object");
      ordered_json fn = {{"name", t["name"]},
                         {"description", t.value("description", std::string())},
                         {"parameters", ordered_json::parse(schema.dump())}};
      spec.names.push_back(t["name"].get<std::string>());
      spec.tools.push_back({{"type", "function"}, {"function", std::move(fn)}});
    }
    spec.choice = ToolChoice::kAuto;
  }
  const json* choice = field(body, "tool_choice");
  if (choice == nullptr) return spec;
  const json type = choice->is_object() ? choice->value("type", json()) : json();
  if (type == "none") {
    spec.choice = ToolChoice::kNone;
  } else if (type == "any" || type == "tool") {
    if (spec.names.empty()) return Status::invalid_argument("tool_choice: needs tools");
    spec.choice = ToolChoice::kRequired;
    if (type == "tool") {
      const json name = choice->value("name", json());
      if (!name.is_string()) return Status::invalid_argument("tool_choice.name: field required");
      COHORT_RETURN_IF_ERROR(
          require_offered(spec, name.get<std::string>(), nullptr, "tool_choice"));
      spec.names = {name.get<std::string>()};
    }
  } else if (type != "auto") {
    return Status::invalid_argument("tool_choice.type: must be auto, any, tool or none");
  }
  return spec;
}

Result<ToolSpec> parse_ollama_tools(const json& body) {
  ToolSpec spec;
  const json* tools = field(body, "tools");
  if (tools == nullptr || (tools->is_array() && tools->empty())) return spec;
  std::string param;
  COHORT_RETURN_IF_ERROR(read_function_tools(*tools, "tools", &param, &spec));
  spec.choice = ToolChoice::kAuto;
  return spec;
}

std::optional<ToolFormat> apply_tools(const ToolSpec& spec, const std::string& chat_template,
                                      runtime::ChatPrompt* chat, runtime::CompletionRequest* req) {
  if (spec.choice == ToolChoice::kNone) return std::nullopt;
  chat->tools = spec.tools;
  if (spec.choice == ToolChoice::kRequired) {
    req->constraint = text::OutputConstraint::tool_call(forced_call_shapes(spec));
    return ToolFormat::kForced;
  }
  return detect_tool_format(chat_template);
}

std::vector<text::OutputConstraint::Tool> forced_call_shapes(const ToolSpec& spec) {
  std::vector<text::OutputConstraint::Tool> out;
  for (const std::string& name : spec.names) {
    text::OutputConstraint::Tool t{name, std::vector<std::string>{}};
    for (const ordered_json& tool : spec.tools) {
      const ordered_json& fn = tool["function"];
      if (fn["name"] != name) continue;
      const ordered_json params = fn.value("parameters", ordered_json::object());
      const ordered_json props = params.value("properties", ordered_json::object());
      const bool open_schema = params.value("additionalProperties", false) != false ||
                               (params.contains("type") && params["type"] != "object");
      if (open_schema || !props.is_object()) {
        t.keys.reset();
      } else {
        for (auto it = props.begin(); it != props.end(); ++it) t.keys->push_back(it.key());
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

void tool_call_arguments_for_template(ordered_json* tool_calls) {
  if (!tool_calls->is_array()) return;
  for (ordered_json& call : *tool_calls) {
    if (!call.is_object() || !call.contains("function") || !call["function"].is_object() ||
        !call["function"].contains("arguments")) {
      continue;
    }
    ordered_json& args = call["function"]["arguments"];
    if (!args.is_string()) continue;
    ordered_json parsed = ordered_json::parse(args.get<std::string>(), nullptr, false);
    if (parsed.is_object()) args = std::move(parsed);
  }
}

}  // namespace cohort::api
