// The bodies of the embedding endpoints, parsed without HTTP or the engine.
//
// OpenAI POST /v1/embeddings: model (string), input (required: a string, an array of
// strings, an array of token ids, or an array of arrays of token ids; at most 2048 inputs,
// none empty), encoding_format ("float", the default, or "base64"), dimensions (an integer
// >= 1; the engine checks it against the model), user (ignored). Too long inputs are
// refused (no truncation), as OpenAI does.
// Ollama POST /api/embed: model (required), input (a string or an array of strings; absent
// or "" only loads the model and answers no embeddings), truncate (boolean, default true:
// an input longer than the context is cut to it), dimensions, options and keep_alive
// (ignored). Legacy POST /api/embeddings: model, prompt (a string; "" loads only), options
// and keep_alive (ignored); too long prompts are refused.
//
// Errors: kInvalidArgument with a message naming the field (and *param set to it).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "runtime/engine.h"

namespace cohort::api {

// OpenAI's cap on inputs per request.
inline constexpr size_t kMaxEmbeddingInputs = 2048;

struct EmbeddingParams {
  std::string model;
  bool base64 = false;  // OpenAI encoding_format "base64"
  // Ollama only: no input was given ("" or absent), so the request only loads the model.
  bool load_only = false;
  runtime::EmbeddingRequest request;
};

Result<EmbeddingParams> parse_openai_embedding_request(const nlohmann::json& body,
                                                       std::string* param);
Result<EmbeddingParams> parse_ollama_embed_request(const nlohmann::json& body, std::string* param);
Result<EmbeddingParams> parse_ollama_embeddings_request(const nlohmann::json& body,
                                                        std::string* param);

}  // namespace cohort::api
