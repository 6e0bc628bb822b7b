#include "api/embedding_request.h"

#include <limits>

#include "api/json_fields.h"

namespace cohort::api {
namespace {

using nlohmann::json;

runtime::EmbeddingInput text_input(std::string text) {
  runtime::EmbeddingInput in;
  in.text = std::move(text);
  return in;
}

// A non-empty array of token ids (each a non-negative int32) as one input.
Status read_token_ids(const json& ids, std::string* param, runtime::EmbeddingInput* in) {
  if (ids.empty()) return field_error(param, "input", "'input' holds an empty token array");
  in->is_tokens = true;
  in->tokens.reserve(ids.size());
  for (const json& v : ids) {
    int64_t id = 0;
    if (!as_int64(v, &id) || id < 0 || id > std::numeric_limits<int32_t>::max()) {
      return field_error(param, "input", "'input' token ids must be non-negative integers");
    }
    in->tokens.push_back(static_cast<int32_t>(id));
  }
  return Status::ok();
}

Status read_openai_input(const json& body, std::string* param, runtime::EmbeddingRequest* r) {
  const json* input = field(body, "input");
  const char* kShape =
      "'input' must be a string, an array of strings, an array of token ids or an array of "
      "token id arrays";
  if (input == nullptr) return field_error(param, "input", "'input' is required");
  if (input->is_string()) {
    if (input->get_ref<const std::string&>().empty()) {
      return field_error(param, "input", "'input' is an empty string");
    }
    r->inputs.push_back(text_input(input->get<std::string>()));
    return Status::ok();
  }
  if (!input->is_array()) return field_error(param, "input", kShape);
  if (input->empty()) return field_error(param, "input", "'input' is an empty array");
  if (input->size() > kMaxEmbeddingInputs) {
    return field_error(param, "input",
                       "'input' holds more than " + std::to_string(kMaxEmbeddingInputs) + " items");
  }
  const json& first = input->front();
  if (first.is_number()) {  // one input given as token ids
    runtime::EmbeddingInput in;
    COHORT_RETURN_IF_ERROR(read_token_ids(*input, param, &in));
    r->inputs.push_back(std::move(in));
    return Status::ok();
  }
  for (const json& item : *input) {
    if (first.is_string() && item.is_string()) {
      if (item.get_ref<const std::string&>().empty()) {
        return field_error(param, "input", "'input' holds an empty string");
      }
      r->inputs.push_back(text_input(item.get<std::string>()));
    } else if (first.is_array() && item.is_array()) {
      runtime::EmbeddingInput in;
      COHORT_RETURN_IF_ERROR(read_token_ids(item, param, &in));
      r->inputs.push_back(std::move(in));
    } else {
      return field_error(param, "input", kShape);
    }
  }
  return Status::ok();
}

Status read_dimensions(const json& body, std::string* param, runtime::EmbeddingRequest* r) {
  return read_int(body, "dimensions", 1, std::numeric_limits<int32_t>::max(), &r->dimensions,
                  param);
}

}  // namespace

Result<EmbeddingParams> parse_openai_embedding_request(const json& body, std::string* param) {
  EmbeddingParams p;
  COHORT_RETURN_IF_ERROR(read_string(body, "model", &p.model, param));
  COHORT_RETURN_IF_ERROR(read_openai_input(body, param, &p.request));
  std::string format = "float";
  COHORT_RETURN_IF_ERROR(read_string(body, "encoding_format", &format, param));
  if (format != "float" && format != "base64") {
    return field_error(param, "encoding_format",
                       "'encoding_format' must be \"float\" or \"base64\"");
  }
  p.base64 = format == "base64";
  COHORT_RETURN_IF_ERROR(read_dimensions(body, param, &p.request));
  return p;
}

Result<EmbeddingParams> parse_ollama_embed_request(const json& body, std::string* param) {
  EmbeddingParams p;
  COHORT_RETURN_IF_ERROR(read_string(body, "model", &p.model, param));
  if (p.model.empty()) return field_error(param, "model", "model is required");
  p.request.truncate = true;
  COHORT_RETURN_IF_ERROR(read_bool(body, "truncate", &p.request.truncate, param));
  COHORT_RETURN_IF_ERROR(read_dimensions(body, param, &p.request));
  const json* input = field(body, "input");
  if (input != nullptr && input->is_string()) {
    if (!input->get_ref<const std::string&>().empty()) {
      p.request.inputs.push_back(text_input(input->get<std::string>()));
    }
  } else if (input != nullptr && input->is_array()) {
    if (input->size() > kMaxEmbeddingInputs) {
      return field_error(param, "input",
                         "input holds more than " + std::to_string(kMaxEmbeddingInputs) + " items");
    }
    for (const json& item : *input) {
      if (!item.is_string() || item.get_ref<const std::string&>().empty()) {
        return field_error(param, "input",
                           "input must be a string or an array of non-empty strings");
      }
      p.request.inputs.push_back(text_input(item.get<std::string>()));
    }
  } else if (input != nullptr) {
    return field_error(param, "input", "input must be a string or an array of strings");
  }
  p.load_only = p.request.inputs.empty();
  return p;
}

Result<EmbeddingParams> parse_ollama_embeddings_request(const json& body, std::string* param) {
  EmbeddingParams p;
  COHORT_RETURN_IF_ERROR(read_string(body, "model", &p.model, param));
  if (p.model.empty()) return field_error(param, "model", "model is required");
  std::string prompt;
  COHORT_RETURN_IF_ERROR(read_string(body, "prompt", &prompt, param));
  if (!prompt.empty()) p.request.inputs.push_back(text_input(std::move(prompt)));
  p.load_only = p.request.inputs.empty();
  return p;
}

}  // namespace cohort::api
