// The tools a request offers and whether it must call one, read from each dialect's fields
// into one shape, and applied to the generation:
//   OpenAI     tools [{type:"function", function:{name, description, parameters}}],
//              tool_choice "none" | "auto" (default) | "required" | {type:"function",
//              function:{name}}; the legacy `functions` stay refused.
//   Anthropic  tools [{name, description, input_schema}] (server tools refused),
//              tool_choice {type: "auto" | "any" | "tool" (name) | "none"}.
//   Ollama     tools as OpenAI's (no tool_choice).
// Tools are handed to the chat template in OpenAI's shape (what Hugging Face templates
// read). A forced call (required / any / a named tool) is decoded under a constraint
// (text::OutputConstraint::tool_call); otherwise the model's own format is parsed.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/tool_calls.h"
#include "core/status.h"
#include "runtime/engine.h"

namespace cohort::api {

enum class ToolChoice { kNone, kAuto, kRequired };

struct ToolSpec {
  nlohmann::ordered_json tools;  // OpenAI shape; null: no tools
  ToolChoice choice = ToolChoice::kNone;
  std::vector<std::string> names;  // the tools a forced call may name
};

// The forced-call shapes of spec's tools named in spec.names: each with the argument names
// its parameters schema declares under "properties" (none declared: only {}; a schema
// with additionalProperties or without a type object: any keys).
std::vector<text::OutputConstraint::Tool> forced_call_shapes(const ToolSpec& spec);

// kInvalidArgument naming the field (*param for OpenAI) on malformed tools or a choice
// naming a tool that is not offered.
Result<ToolSpec> parse_openai_tools(const nlohmann::json& body, std::string* param);
Result<ToolSpec> parse_anthropic_tools(const nlohmann::json& body);
Result<ToolSpec> parse_ollama_tools(const nlohmann::json& body);

// Puts the tools into the template's variables and, for a forced call, the constraint into
// the request; returns how to read calls from the output (none: no tools).
std::optional<ToolFormat> apply_tools(const ToolSpec& spec, const std::string& chat_template,
                                      runtime::ChatPrompt* chat, runtime::CompletionRequest* req);

// OpenAI-shaped tool calls ([{function:{name, arguments}}]) as templates read them: each
// call's arguments made an object (a JSON string that parses to an object is parsed;
// anything else, and calls of another shape, are left as they are).
void tool_call_arguments_for_template(nlohmann::ordered_json* tool_calls);

}  // namespace cohort::api
