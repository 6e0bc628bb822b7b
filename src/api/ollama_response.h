// Ollama's response objects, without HTTP or the engine: the NDJSON lines of /api/chat and
// /api/generate, the model entries of /api/tags and /api/ps, and /api/show's body.
// Timestamps are RFC 3339 (UTC), durations integer nanoseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/engine.h"

namespace cohort::api {

// "2026-01-15T10:30:00.123456789Z" for a time in nanoseconds since the Unix epoch.
std::string rfc3339_utc(int64_t unix_ns);
int64_t unix_time_ns();

struct OllamaTimings {
  int64_t total_ns = 0;
  int64_t prompt_eval_ns = 0;  // up to the first generated piece
  int64_t eval_ns = 0;
};

// A line before the last: {model, created_at, message:{role:"assistant",content} | response,
// done:false}.
nlohmann::json ollama_piece(const std::string& model, bool chat, const std::string& text);
// The last line (or the whole non-streamed answer with `text` = the full text): done:true,
// done_reason "stop"|"length", the durations and the token counts.
nlohmann::json ollama_final(const std::string& model, bool chat, const std::string& text,
                            const runtime::CompletionResult& result, const OllamaTimings& t);
// The answer to a request without a prompt: done:true, done_reason `reason` ("load", or
// "unload" when it asked for keep_alive 0).
nlohmann::json ollama_loaded(const std::string& model, bool chat, const char* reason = "load");

// One /api/tags entry (name, model, modified_at, size, digest, details); `ps` adds
// expires_at (expires_ns; unset: a far date, as Ollama shows keep_alive -1) and size_vram.
nlohmann::json ollama_model_entry(const std::string& name, const runtime::ModelInfo& info,
                                  int64_t modified_ns, bool ps,
                                  std::optional<int64_t> expires_ns = std::nullopt);
// /api/show's body: modelfile, parameters, template, details, model_info, capabilities.
nlohmann::json ollama_show(const std::string& name, const runtime::ModelInfo& info,
                           int64_t modified_ns);

}  // namespace cohort::api
