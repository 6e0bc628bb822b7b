// Ollama's POST /api/chat and /api/generate bodies, parsed without HTTP or the engine.
//
// Both: model (string, required), stream (boolean, default true), options {temperature,
// top_p, top_k, min_p, num_predict (-1: no limit, -2: fill the context), seed, stop (array
// of strings), repeat_penalty, repeat_last_n, presence_penalty, frequency_penalty; other
// options such as num_ctx are ignored}, keep_alive (api/ollama_keep_alive.h). Unset sampling
// options take Ollama's defaults (temperature 0.8, top_k 40, top_p 0.9, repeat_penalty 1.1,
// num_predict -1).
// /api/chat: messages [{role system|user|assistant|tool, content, tool_calls, tool_name}],
// tools (api/tool_spec.h). format "json": the answer is decoded as a JSON object.
// /api/generate: prompt, system; raw:true feeds the prompt as is, otherwise it is rendered
// as a user turn (after the system one) by the chat template. An empty prompt only "loads"
// the model (done_reason "load").
// Refused with a 400: images, format as a schema, think:true, a non-empty suffix, template
// or context.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/tool_spec.h"
#include "core/status.h"
#include "runtime/engine.h"

namespace cohort::api {

struct OllamaParams {
  std::string model;
  bool stream = true;
  bool chat = true;        // /api/chat (message lines) or /api/generate (response lines)
  bool render = true;      // prompt from render_chat(chat_prompt); false: request.prompt as is
  bool load_only = false;  // /api/generate with an empty prompt
  std::optional<int64_t> keep_alive_ms;  // unset: the server's default; 0: unload when done
  runtime::ChatPrompt chat_prompt;
  runtime::CompletionRequest request;
  ToolSpec tools;
  std::optional<ToolFormat> tool_format;  // set by apply_tools() when tools are in play
};

// kInvalidArgument with a message naming the field.
Result<OllamaParams> parse_ollama_chat(const nlohmann::json& body);
Result<OllamaParams> parse_ollama_generate(const nlohmann::json& body);

}  // namespace cohort::api
