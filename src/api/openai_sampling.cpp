#include "api/openai_sampling.h"

#include <limits>

#include "api/json_fields.h"

namespace cohort::api {

using nlohmann::json;

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr double kMaxDouble = std::numeric_limits<double>::max();

// True when `v` is the default that means "feature off": false, 0, 1 (for n), "", {} or [].
bool is_off(const json& v, int64_t default_int) {
  if (v.is_boolean()) return !v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>() == default_int;
  if (v.is_string()) return v.get_ref<const std::string&>().empty();
  if (v.is_object() || v.is_array()) return v.empty();
  return false;
}

Status refuse(std::string* param, const char* name, const std::string& why) {
  return field_error(param, name, std::string("'") + name + "' " + why);
}

}  // namespace

Status parse_openai_sampling(const json& body, runtime::CompletionRequest* req,
                             std::string* param) {
  if (const json* rf = field(body, "response_format");
      rf != nullptr && rf->is_object() && rf->value("type", json()) == "json_object") {
    req->constraint = text::OutputConstraint::json_object();
  }
  int64_t max_tokens = -1, max_completion = -1;
  COHORT_RETURN_IF_ERROR(read_int(body, "max_tokens", 0, kInt64Max, &max_tokens, param));
  COHORT_RETURN_IF_ERROR(
      read_int(body, "max_completion_tokens", 0, kInt64Max, &max_completion, param));
  if (max_tokens >= 0 && max_completion >= 0) {
    req->max_tokens = std::min(max_tokens, max_completion);
  } else if (max_tokens >= 0 || max_completion >= 0) {
    req->max_tokens = std::max(max_tokens, max_completion);
  }
  COHORT_RETURN_IF_ERROR(read_float(body, "temperature", 0, 2, &req->temperature, param));
  COHORT_RETURN_IF_ERROR(read_float(body, "top_p", 0, 1, &req->top_p, param));
  COHORT_RETURN_IF_ERROR(read_float(body, "min_p", 0, 1, &req->min_p, param));
  COHORT_RETURN_IF_ERROR(
      read_float(body, "presence_penalty", -2, 2, &req->presence_penalty, param));
  COHORT_RETURN_IF_ERROR(
      read_float(body, "frequency_penalty", -2, 2, &req->frequency_penalty, param));
  COHORT_RETURN_IF_ERROR(
      read_float(body, "repeat_penalty", 0, kMaxDouble, &req->repeat_penalty, param));
  int64_t top_k = req->top_k, last_n = req->repeat_last_n;
  COHORT_RETURN_IF_ERROR(
      read_int(body, "top_k", 0, std::numeric_limits<int32_t>::max(), &top_k, param));
  COHORT_RETURN_IF_ERROR(
      read_int(body, "repeat_last_n", 0, std::numeric_limits<int32_t>::max(), &last_n, param));
  req->top_k = static_cast<int32_t>(top_k);
  req->repeat_last_n = static_cast<int32_t>(last_n);
  COHORT_RETURN_IF_ERROR(read_seed(body, "seed", &req->seed, param));
  return read_stop(body, "stop", /*allow_string=*/true, &req->stop, param);
}

Status parse_stream_flags(const json& body, StreamFlags* flags, std::string* param) {
  COHORT_RETURN_IF_ERROR(read_bool(body, "stream", &flags->stream, param));
  if (const json* opts = field(body, "stream_options")) {
    if (!opts->is_object()) {
      return field_error(param, "stream_options", "'stream_options' must be an object");
    }
    Status s = read_bool(*opts, "include_usage", &flags->include_usage, param);
    if (!s.is_ok()) {
      *param = "stream_options";
      return s;
    }
  }
  return Status::ok();
}

Status refuse_openai_unsupported(const json& body, bool chat, std::string* param) {
  for (const char* name : {"n", "best_of"}) {
    if (const json* v = field(body, name); v != nullptr && !is_off(*v, 1)) {
      return refuse(param, name, "other than 1 is not supported (one choice per request)");
    }
  }
  for (const char* name : {"logprobs", "top_logprobs", "echo"}) {
    if (const json* v = field(body, name); v != nullptr && !is_off(*v, 0)) {
      return refuse(param, name, "is not supported");
    }
  }
  for (const char* name : {"suffix", "logit_bias", "functions", "audio", "prediction"}) {
    if (const json* v = field(body, name); v != nullptr && !is_off(*v, 0)) {
      return refuse(param, name, "is not supported");
    }
  }
  if (!chat) {  // chat reads tools and tool_choice itself (tool_spec.h)
    if (const json* v = field(body, "tools"); v != nullptr && !is_off(*v, 0)) {
      return refuse(param, "tools", "is only supported by /v1/chat/completions");
    }
  }
  for (const char* name : {"tool_choice", "function_call"}) {
    const json* v = field(body, name);
    if (v != nullptr && (!chat || std::string_view(name) == "function_call") &&
        !(v->is_string() && (*v == "none" || *v == "auto"))) {
      return refuse(param, name, "is not supported (use tools and tool_choice on chat)");
    }
  }
  if (const json* v = field(body, "response_format")) {
    const json type = v->is_object() ? v->value("type", json()) : json();
    if (type != "text" && type != "json_object") {
      return refuse(param, "response_format",
                    "is supported as {\"type\":\"text\"} or {\"type\":\"json_object\"} only "
                    "(json_schema is not enforced by this server)");
    }
  }
  if (const json* v = field(body, "modalities")) {
    if (!(v->is_array() && (v->empty() || (v->size() == 1 && (*v)[0] == "text")))) {
      return refuse(param, "modalities", "other than [\"text\"] is not supported");
    }
  }
  return Status::ok();
}

const char* openai_finish_reason(const runtime::CompletionResult& result) {
  return result.finish_reason == "length" ? "length" : "stop";
}

}  // namespace cohort::api
