// Chat templates: turning a conversation into the prompt text a model was trained on.
//
// A model's tokenizer.chat_template is a Jinja2 template; render_chat_template runs it with
// our interpreter (text/jinja_interpreter.h) the way Hugging Face transformers does
// (sandboxed jinja2, trim_blocks + lstrip_blocks, loopcontrols, tojson keeping non-ASCII,
// raise_exception and strftime_now globals), so the output is byte-identical to
// tokenizer.apply_chat_template(..., tokenize=False) for the same variables.
//
// The context is a JSON object whose keys become the template's variables: messages, tools,
// add_generation_prompt, bos_token, eos_token, enable_thinking and anything else the
// template reads. It must be an nlohmann::ordered_json so object keys keep the order the
// client sent (tojson prints them in that order, as Python does). Keys that are absent are
// undefined in the template (transformers would pass tools=None; pass "tools": null for
// that).
//
// Fallback format, for models without a template (an empty template_source):
//   for each message:  "<|" + role + "|>\n" + content + "\n"
//     content: a string as is; a list of parts: the "text" of each text part, concatenated;
//     null or absent: empty. Each tool call of an assistant message adds a line
//     "<|tool_call|>" + {"name": ..., "arguments": ...} as compact JSON after the content.
//   then, if add_generation_prompt is true:  "<|assistant|>\n"
// bos_token/eos_token are not added (the tokenizer adds BOS if the model wants it).
//
// Errors: a template that calls raise_exception(msg) fails with msg unchanged; other
// failures (syntax, type errors, limits) read "jinja: line N: ...". Never throws.
#pragma once

#include <ctime>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "text/jinja_interpreter.h"

namespace cohort::text {

struct RenderOptions {
  // What strftime_now() sees; nullopt: the real local time at render.
  std::optional<std::tm> now;
  // Bounds on one render (output size, recursion, iterations, steps).
  jinja::RenderLimits limits;
};

// A parsed chat template (or the fallback), reusable across renders and threads.
class ChatTemplate {
 public:
  // An empty source selects the fallback format.
  static Result<ChatTemplate> parse(std::string_view template_source);
  Result<std::string> render(const nlohmann::ordered_json& context,
                             const RenderOptions& opts = {}) const;
  bool is_fallback() const { return !tmpl_.has_value(); }

 private:
  std::optional<jinja::Template> tmpl_;
};

// Parses and renders in one go.
Result<std::string> render_chat_template(std::string_view template_source,
                                         const nlohmann::ordered_json& context,
                                         const RenderOptions& opts = {});

// The fallback format described above.
Result<std::string> render_fallback_chat(const nlohmann::ordered_json& context);

// "2025-01-15T10:30:00" (or with a space for T; seconds and a fractional part optional; no
// time zone) as a local broken-down time with weekday and day of year filled in.
Result<std::tm> parse_local_time(std::string_view iso8601);

}  // namespace cohort::text
