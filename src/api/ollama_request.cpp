#include "api/ollama_request.h"

#include <limits>

#include "api/json_fields.h"
#include "api/ollama_keep_alive.h"
#include "api/tool_spec.h"

namespace cohort::api {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

Status parse_options(const json& body, runtime::CompletionRequest* req) {
  req->temperature = 0.8f;
  req->top_k = 40;
  req->top_p = 0.9f;
  req->repeat_penalty = 1.1f;
  req->max_tokens = -1;
  const json* o = field(body, "options");
  if (o == nullptr) return Status::ok();
  if (!o->is_object()) return Status::invalid_argument("'options' must be an object");
  std::string param;
  COHORT_RETURN_IF_ERROR(read_float(*o, "temperature", 0, 100, &req->temperature, &param));
  COHORT_RETURN_IF_ERROR(read_float(*o, "top_p", 0, 1, &req->top_p, &param));
  COHORT_RETURN_IF_ERROR(read_float(*o, "min_p", 0, 1, &req->min_p, &param));
  COHORT_RETURN_IF_ERROR(read_float(*o, "repeat_penalty", 0, 100, &req->repeat_penalty, &param));
  COHORT_RETURN_IF_ERROR(
      read_float(*o, "presence_penalty", -100, 100, &req->presence_penalty, &param));
  COHORT_RETURN_IF_ERROR(
      read_float(*o, "frequency_penalty", -100, 100, &req->frequency_penalty, &param));
  int64_t top_k = req->top_k, last_n = req->repeat_last_n, predict = -1;
  COHORT_RETURN_IF_ERROR(read_int(*o, "top_k", 0, kMaxInt32, &top_k, &param));
  COHORT_RETURN_IF_ERROR(read_int(*o, "repeat_last_n", 0, kMaxInt32, &last_n, &param));
  COHORT_RETURN_IF_ERROR(read_int(*o, "num_predict", -2, kMaxInt64, &predict, &param));
  req->top_k = static_cast<int32_t>(top_k);
  req->repeat_last_n = static_cast<int32_t>(last_n);
  req->max_tokens = predict < 0 ? -1 : predict;
  COHORT_RETURN_IF_ERROR(read_seed(*o, "seed", &req->seed, &param));
  return read_stop(*o, "stop", /*allow_string=*/true, &req->stop, &param);
}

bool is_set(const json& body, const char* name) {
  const json* v = field(body, name);
  return v != nullptr && !(v->is_boolean() && !v->get<bool>()) &&
         !(v->is_string() && v->get_ref<const std::string&>().empty()) &&
         !((v->is_array() || v->is_object()) && v->empty());
}

Status refuse_unsupported(const json& body) {
  if (is_set(body, "format") && body["format"] != "json") {
    return Status::invalid_argument(
        "'format' is supported as \"json\" only (a schema is not enforced by this server)");
  }
  if (is_set(body, "images")) return Status::invalid_argument("'images' are not supported");
  if (const json* think = field(body, "think");
      think != nullptr && !(think->is_boolean() && !think->get<bool>())) {
    return Status::invalid_argument("'think' is not supported by this model");
  }
  for (const char* name : {"suffix", "template", "context"}) {
    if (is_set(body, name)) {
      return Status::invalid_argument(std::string("'") + name + "' is not supported");
    }
  }
  return Status::ok();
}

Status parse_common(const json& body, OllamaParams* p) {
  std::string param;
  COHORT_RETURN_IF_ERROR(read_string(body, "model", &p->model, &param));
  if (p->model.empty()) return Status::invalid_argument("model is required");
  COHORT_RETURN_IF_ERROR(read_bool(body, "stream", &p->stream, &param));
  COHORT_ASSIGN_OR_RETURN(p->keep_alive_ms, parse_keep_alive(body));
  COHORT_RETURN_IF_ERROR(refuse_unsupported(body));
  if (is_set(body, "format")) p->request.constraint = text::OutputConstraint::json_object();
  p->request.prompt_is_chat = true;
  return parse_options(body, &p->request);
}

Status parse_ollama_messages(const json& body, ordered_json* messages) {
  const json* m = field(body, "messages");
  if (m == nullptr) return Status::ok();  // Ollama: no messages just loads the model
  if (!m->is_array()) return Status::invalid_argument("'messages' must be an array");
  for (size_t i = 0; i < m->size(); ++i) {
    const json& msg = (*m)[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!msg.is_object()) return Status::invalid_argument("'" + where + "' must be an object");
    const json role = msg.value("role", json());
    if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
      return Status::invalid_argument("'" + where +
                                      ".role' must be system, user, assistant or tool");
    }
    const json content = msg.value("content", json(""));
    if (!content.is_string()) {
      return Status::invalid_argument("'" + where + ".content' must be a string");
    }
    if (is_set(msg, "images")) return Status::invalid_argument("'images' are not supported");
    ordered_json out = {{"role", role.get<std::string>()}, {"content", content}};
    if (is_set(msg, "tool_calls")) {
      if (!msg["tool_calls"].is_array()) {
        return Status::invalid_argument("'" + where + ".tool_calls' must be an array");
      }
      out["tool_calls"] = ordered_json::parse(msg["tool_calls"].dump());
      tool_call_arguments_for_template(&out["tool_calls"]);
    }
    for (const char* key : {"tool_name", "tool_call_id", "name"}) {
      if (msg.contains(key)) out[key] = ordered_json::parse(msg[key].dump());
    }
    messages->push_back(std::move(out));
  }
  return Status::ok();
}

}  // namespace

Result<OllamaParams> parse_ollama_chat(const json& body) {
  OllamaParams p;
  p.chat = true;
  COHORT_RETURN_IF_ERROR(parse_common(body, &p));
  COHORT_RETURN_IF_ERROR(parse_ollama_messages(body, &p.chat_prompt.messages));
  Result<ToolSpec> tools = parse_ollama_tools(body);
  if (!tools.is_ok()) return tools.status();
  p.tools = std::move(tools).value();
  p.load_only = p.chat_prompt.messages.empty();
  return p;
}

Result<OllamaParams> parse_ollama_generate(const json& body) {
  OllamaParams p;
  p.chat = false;
  COHORT_RETURN_IF_ERROR(parse_common(body, &p));
  std::string prompt, system, param;
  bool raw = false;
  COHORT_RETURN_IF_ERROR(read_string(body, "prompt", &prompt, &param));
  COHORT_RETURN_IF_ERROR(read_string(body, "system", &system, &param));
  COHORT_RETURN_IF_ERROR(read_bool(body, "raw", &raw, &param));
  p.load_only = prompt.empty();
  if (raw) {
    p.render = false;
    p.request.prompt = prompt;
    p.request.prompt_is_chat = false;
    return p;
  }
  if (!system.empty()) p.chat_prompt.messages.push_back({{"role", "system"}, {"content", system}});
  p.chat_prompt.messages.push_back({{"role", "user"}, {"content", prompt}});
  return p;
}

}  // namespace cohort::api
