#include "api/openai_stream.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "api/openai_chat.h"
#include "api/openai_completion.h"
#include "api/prompt_check.h"
#include "api/sse.h"

namespace cohort::api {
namespace {

using nlohmann::json;

void run_openai_stream(runtime::Engine& engine, const OpenAiStream& s, StreamWriter& w) {
  const auto send = [&](const json& j) { return w.write(sse_data(j)); };
  const auto piece_chunk = [&](std::string_view text, const char* finish) {
    return s.chat ? chat_chunk(s.id, s.created, s.model,
                               finish ? json::object() : json{{"content", text}}, finish)
                  : completion_chunk(s.id, s.created, s.model, std::string(text), finish);
  };
  if (s.chat && !send(chat_chunk(s.id, s.created, s.model, {{"role", "assistant"}, {"content", ""}},
                                 nullptr))) {
    return;
  }
  runtime::CompletionRequest req = s.request;
  std::optional<ToolStreamFilter> filter;
  if (s.tools) filter.emplace(*s.tools);
  req.on_text = [&](std::string_view piece) {
    if (!filter) return send(piece_chunk(piece, nullptr));
    const std::string content = filter->push(piece);
    return content.empty() || send(piece_chunk(content, nullptr));
  };
  Result<runtime::CompletionResult> result = engine.complete(req);
  if (!result.is_ok()) {
    const int status = http_status_for(result.status());
    send({{"error",
           {{"message", result.status().message()},
            {"type", status >= 500 ? "server_error" : "invalid_request_error"},
            {"code", nullptr}}}});
    return;
  }
  if (result->finish_reason == "cancelled") return;
  const char* finish = openai_finish_reason(*result);
  if (filter) {
    std::string unsent;
    const ParsedOutput parsed = filter->finish(&unsent);
    if (!unsent.empty() && !send(piece_chunk(unsent, nullptr))) return;
    if (!parsed.calls.empty()) {
      const json delta = {{"tool_calls", openai_tool_calls(parsed.calls, /*with_index=*/true)}};
      if (!send(chat_chunk(s.id, s.created, s.model, delta, nullptr))) return;
      finish = "tool_calls";
    }
  }
  if (!send(piece_chunk("", finish))) return;
  if (s.include_usage) {
    const json usage = openai_usage(*result);
    if (!send(s.chat ? chat_usage_chunk(s.id, s.created, s.model, usage)
                     : completion_usage_chunk(s.id, s.created, s.model, usage))) {
      return;
    }
  }
  w.write(sse_done());
}

}  // namespace

StreamProducer openai_stream_producer(runtime::Engine& engine, OpenAiStream stream) {
  return [&engine, s = std::move(stream)](StreamWriter& w) { run_openai_stream(engine, s, w); };
}

}  // namespace cohort::api
