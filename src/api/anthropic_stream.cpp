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

void run(runtime::Engine& engine, const AnthropicStream& s, StreamWriter& w) {
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
  req.on_text = [&](std::string_view piece) {
    return send("content_block_delta",
                {{"index", 0}, {"delta", {{"type", "text_delta"}, {"text", piece}}}});
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
  if (!send("content_block_stop", {{"index", 0}}) ||
      !send("message_delta",
            {{"delta",
              {{"stop_reason", anthropic_stop_reason(*result)}, {"stop_sequence", stop_sequence}}},
             {"usage", {{"output_tokens", result->completion_tokens}}}})) {
    return;
  }
  send("message_stop", json::object());
}

}  // namespace

StreamProducer anthropic_stream_producer(runtime::Engine& engine, AnthropicStream stream) {
  return [&engine, s = std::move(stream)](StreamWriter& w) { run(engine, s, w); };
}

}  // namespace cohort::api
