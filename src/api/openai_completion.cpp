#include "api/openai_completion.h"

#include <utility>

#include "api/json_fields.h"

namespace cohort::api {
namespace {

using nlohmann::json;

Status parse_prompt(const json& body, std::string* prompt, std::string* param) {
  const json* p = field(body, "prompt");
  if (p == nullptr) return field_error(param, "prompt", "'prompt' is required");
  if (p->is_string()) {
    *prompt = p->get<std::string>();
    return Status::ok();
  }
  if (p->is_array() && p->size() == 1 && (*p)[0].is_string()) {
    *prompt = (*p)[0].get<std::string>();
    return Status::ok();
  }
  if (p->is_array() && p->size() > 1 && (*p)[0].is_string()) {
    return field_error(param, "prompt",
                       "'prompt' arrays of more than one prompt are not supported");
  }
  if (p->is_array() && !p->empty() && ((*p)[0].is_number_integer() || (*p)[0].is_array())) {
    return field_error(param, "prompt", "token-id prompts are not supported");
  }
  return field_error(param, "prompt", "'prompt' must be a string or an array of one string");
}

}  // namespace

Result<CompletionParams> parse_completion_request(const json& body, std::string* error_param) {
  CompletionParams params;
  COHORT_RETURN_IF_ERROR(read_string(body, "model", &params.model, error_param));
  COHORT_RETURN_IF_ERROR(parse_stream_flags(body, &params.stream, error_param));
  COHORT_RETURN_IF_ERROR(refuse_openai_unsupported(body, /*chat=*/false, error_param));
  COHORT_RETURN_IF_ERROR(parse_prompt(body, &params.request.prompt, error_param));
  params.request.max_tokens = 16;  // OpenAI's default for this endpoint
  COHORT_RETURN_IF_ERROR(parse_openai_sampling(body, &params.request, error_param));
  return params;
}

json openai_usage(const runtime::CompletionResult& result) {
  return {{"prompt_tokens", result.prompt_tokens},
          {"completion_tokens", result.completion_tokens},
          {"total_tokens", result.prompt_tokens + result.completion_tokens}};
}

json completion_response(const std::string& id, int64_t created, const std::string& model,
                         const runtime::CompletionResult& result) {
  json choice = {{"index", 0},
                 {"text", result.text},
                 {"logprobs", nullptr},
                 {"finish_reason", openai_finish_reason(result)}};
  return {{"id", id},
          {"object", "text_completion"},
          {"created", created},
          {"model", model},
          {"choices", json::array({std::move(choice)})},
          {"usage", openai_usage(result)}};
}

json completion_chunk(const std::string& id, int64_t created, const std::string& model,
                      const std::string& text, const char* finish_reason) {
  json choice = {{"index", 0},
                 {"text", text},
                 {"logprobs", nullptr},
                 {"finish_reason", finish_reason ? json(finish_reason) : json(nullptr)}};
  return {{"id", id},
          {"object", "text_completion"},
          {"created", created},
          {"model", model},
          {"choices", json::array({std::move(choice)})}};
}

json completion_usage_chunk(const std::string& id, int64_t created, const std::string& model,
                            const json& usage) {
  return {{"id", id},       {"object", "text_completion"}, {"created", created},
          {"model", model}, {"choices", json::array()},    {"usage", usage}};
}

}  // namespace cohort::api
