#include "api/anthropic_stream.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "api/anthropic_error.h"
#include "api/anthropic_messages.h"
#include "api/prompt_check.h"
#include "api/sse.h"

namespace cohort::api {
namespace {

using nlohmann::json;

void run_anthropic_stream(runtime::Engine& engine, const AnthropicStream& s, StreamWriter& w) {
  const auto send = [&](const char* type, json data) {
    data["type"] = type;
    return w.write(sse_event(type, data));
  };
  json message = {{"id", s.id},
                  {"type", "message"},
                  {"role", "assistant"},
                  {"model", s.model},
                  {"content", json::array()},
                  {"stop_reason", nullptr},
                  {"stop_sequence", nullptr},
                  {"usage", {{"input_tokens", s.input_tokens}, {"output_tokens", 0}}}};
  if (!send("message_start", {{"message", std::move(message)}}) ||
      !send("content_block_start",
            {{"index", 0}, {"content_block", {{"type", "text"}, {"text", ""}}}}) ||
      !send("ping", json::object())) {
    return;
  }
  runtime::CompletionRequest req = s.request;
  const auto text_delta = [&](std::string_view piece) {
    return send("content_block_delta",
                {{"index", 0}, {"delta", {{"type", "text_delta"}, {"text", piece}}}});
  };
  std::optional<ToolStreamFilter> filter;
  if (s.tools) filter.emplace(*s.tools);
  req.on_text = [&](std::string_view piece) {
    if (!filter) return text_delta(piece);
    const std::string content = filter->push(piece);
    return content.empty() || text_delta(content);
  };
  Result<runtime::CompletionResult> result = engine.complete(req);
  if (!result.is_ok()) {
    const json body =
        anthropic_error_body(http_status_for(result.status()), result.status().message());
    w.write(sse_event("error", body));
    return;
  }
  if (result->finish_reason == "cancelled") return;
  const json stop_sequence =
      result->stop_sequence.empty() ? json(nullptr) : json(result->stop_sequence);
  ParsedOutput parsed;
  if (filter) {
    std::string unsent;
    parsed = filter->finish(&unsent);
    if (!unsent.empty() && !text_delta(unsent)) return;
  }
  if (!send("content_block_stop", {{"index", 0}})) return;
  for (size_t i = 0; i < parsed.calls.size(); ++i) {
    json block = anthropic_tool_use(parsed.calls[i]);
    block["input"] = json::object();
    const json delta = {{"type", "input_json_delta"},
                        {"partial_json", parsed.calls[i].arguments.dump()}};
    if (!send("content_block_start", {{"index", i + 1}, {"content_block", std::move(block)}}) ||
        !send("content_block_delta", {{"index", i + 1}, {"delta", delta}}) ||
        !send("content_block_stop", {{"index", i + 1}})) {
      return;
    }
  }
  const char* stop_reason = parsed.calls.empty() ? anthropic_stop_reason(*result) : "tool_use";
  if (!send("message_delta",
            {{"delta", {{"stop_reason", stop_reason}, {"stop_sequence", stop_sequence}}},
             {"usage", {{"output_tokens", result->completion_tokens}}}})) {
    return;
  }
  send("message_stop", json::object());
}

}  // namespace

StreamProducer anthropic_stream_producer(runtime::Engine& engine, AnthropicStream stream) {
  return [&engine, s = std::move(stream)](StreamWriter& w) { run_anthropic_stream(engine, s, w); };
}

}  // namespace cohort::api
