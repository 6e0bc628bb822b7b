#include "api/openai_completion.h"

#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

namespace cohort::api {
namespace {

using nlohmann::json;

// The field, or null when absent or JSON null (SDKs send null for "unset").
const json* field(const json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  return &*it;
}

Status invalid(std::string* error_param, const char* name, const std::string& message) {
  *error_param = name;
  return Status::invalid_argument(message);
}

bool as_int64(const json& v, int64_t* out) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  *out = v.get<int64_t>();
  return true;
}

Status parse_prompt(const json& body, std::string* prompt, std::string* error_param) {
  const json* p = field(body, "prompt");
  if (p == nullptr) return invalid(error_param, "prompt", "'prompt' is required");
  if (p->is_string()) {
    *prompt = p->get<std::string>();
    return Status::ok();
  }
  if (p->is_array() && p->size() == 1 && (*p)[0].is_string()) {
    *prompt = (*p)[0].get<std::string>();
    return Status::ok();
  }
  if (p->is_array() && p->size() > 1) {
    return invalid(error_param, "prompt",
                   "'prompt' arrays of more than one prompt are not supported yet");
  }
  if (p->is_array() && !p->empty() && ((*p)[0].is_number_integer() || (*p)[0].is_array())) {
    return invalid(error_param, "prompt", "token-id prompts are not supported yet");
  }
  return invalid(error_param, "prompt", "'prompt' must be a string or an array of one string");
}

Status parse_stop(const json& body, std::vector<std::string>* stop, std::string* error_param) {
  const json* s = field(body, "stop");
  if (s == nullptr) return Status::ok();
  if (s->is_string()) {
    if (!s->get_ref<const std::string&>().empty()) stop->push_back(s->get<std::string>());
    return Status::ok();
  }
  if (!s->is_array()) {
    return invalid(error_param, "stop", "'stop' must be a string or an array of strings");
  }
  for (const json& item : *s) {
    if (!item.is_string()) {
      return invalid(error_param, "stop", "'stop' must be a string or an array of strings");
    }
    if (!item.get_ref<const std::string&>().empty()) stop->push_back(item.get<std::string>());
  }
  return Status::ok();
}

Status parse_sampling(const json& body, runtime::CompletionRequest* req, std::string* error_param) {
  if (const json* v = field(body, "max_tokens")) {
    int64_t n = 0;
    if (!as_int64(*v, &n) || n < 0) {
      return invalid(error_param, "max_tokens", "'max_tokens' must be an integer >= 0");
    }
    req->max_tokens = n;
  }
  if (const json* v = field(body, "temperature")) {
    if (!v->is_number() || v->get<double>() < 0.0 || v->get<double>() > 2.0) {
      return invalid(error_param, "temperature", "'temperature' must be a number in [0, 2]");
    }
    req->temperature = v->get<float>();
  }
  if (const json* v = field(body, "top_p")) {
    if (!v->is_number() || v->get<double>() < 0.0 || v->get<double>() > 1.0) {
      return invalid(error_param, "top_p", "'top_p' must be a number in [0, 1]");
    }
    req->top_p = v->get<float>();
  }
  if (const json* v = field(body, "top_k")) {
    int64_t k = 0;
    if (!as_int64(*v, &k) || k < 0 || k > std::numeric_limits<int32_t>::max()) {
      return invalid(error_param, "top_k", "'top_k' must be an integer >= 0");
    }
    req->top_k = static_cast<int32_t>(k);
  }
  if (const json* v = field(body, "seed")) {
    if (!v->is_number_integer()) return invalid(error_param, "seed", "'seed' must be an integer");
    req->seed =
        v->is_number_unsigned() ? v->get<uint64_t>() : static_cast<uint64_t>(v->get<int64_t>());
  }
  return Status::ok();
}

// Fields with a meaning we do not implement yet: refuse them rather than answer wrongly.
Status refuse_unsupported(const json& body, std::string* error_param) {
  if (const json* v = field(body, "stream")) {
    if (!v->is_boolean()) return invalid(error_param, "stream", "'stream' must be a boolean");
    if (v->get<bool>()) return invalid(error_param, "stream", "streaming is not supported yet");
  }
  for (const char* name : {"n", "best_of"}) {
    if (const json* v = field(body, name)) {
      int64_t n = 0;
      if (!as_int64(*v, &n) || n != 1) {
        return invalid(error_param, name,
                       std::string("'") + name + "' other than 1 is not supported yet");
      }
    }
  }
  if (const json* v = field(body, "echo"); v != nullptr && !(v->is_boolean() && !v->get<bool>())) {
    return invalid(error_param, "echo", "'echo' is not supported yet");
  }
  if (const json* v = field(body, "logprobs")) {
    const bool off =
        (v->is_boolean() && !v->get<bool>()) || (v->is_number_integer() && v->get<int64_t>() == 0);
    if (!off) return invalid(error_param, "logprobs", "'logprobs' is not supported yet");
  }
  if (const json* v = field(body, "suffix");
      v != nullptr && !(v->is_string() && v->get_ref<const std::string&>().empty())) {
    return invalid(error_param, "suffix", "'suffix' is not supported yet");
  }
  return Status::ok();
}

std::string normalise_finish_reason(const std::string& reason) {
  if (reason == "length" || reason == "limit" || reason == "max_tokens") return "length";
  return "stop";
}

}  // namespace

Result<CompletionParams> parse_completion_request(const json& body, std::string* error_param) {
  CompletionParams params;
  if (const json* m = field(body, "model")) {
    if (!m->is_string()) return invalid(error_param, "model", "'model' must be a string");
    params.model = m->get<std::string>();
  }
  COHORT_RETURN_IF_ERROR(refuse_unsupported(body, error_param));
  COHORT_RETURN_IF_ERROR(parse_prompt(body, &params.request.prompt, error_param));
  COHORT_RETURN_IF_ERROR(parse_sampling(body, &params.request, error_param));
  COHORT_RETURN_IF_ERROR(parse_stop(body, &params.request.stop, error_param));
  return params;
}

json completion_response(const std::string& id, int64_t created, const std::string& model,
                         const runtime::CompletionResult& result) {
  json choice = {{"index", 0},
                 {"text", result.text},
                 {"logprobs", nullptr},
                 {"finish_reason", normalise_finish_reason(result.finish_reason)}};
  return {{"id", id},
          {"object", "text_completion"},
          {"created", created},
          {"model", model},
          {"choices", json::array({std::move(choice)})},
          {"usage",
           {{"prompt_tokens", result.prompt_tokens},
            {"completion_tokens", result.completion_tokens},
            {"total_tokens", result.prompt_tokens + result.completion_tokens}}}};
}

}  // namespace cohort::api
