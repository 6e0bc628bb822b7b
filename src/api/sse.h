// The framing of streamed bodies: Server-Sent Events (OpenAI, Anthropic) and NDJSON
// (Ollama), plus the responses that carry them (status 200, the right Content-Type, no
// caching). Each framed string is written as one chunk, so each event is flushed whole.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "api/http_message.h"

namespace cohort::api {

// "data: <compact json>\n\n".
std::string sse_data(const nlohmann::json& j);
// "event: <type>\ndata: <compact json>\n\n".
std::string sse_event(std::string_view type, const nlohmann::json& j);
// "data: [DONE]\n\n", OpenAI's end of stream.
std::string sse_done();
// "<compact json>\n".
std::string ndjson_line(const nlohmann::json& j);

// 200, text/event-stream, Cache-Control: no-cache, streamed by `producer`.
HttpResponse sse_response(StreamProducer producer);
// 200, application/x-ndjson, streamed by `producer`.
HttpResponse ndjson_response(StreamProducer producer);

}  // namespace cohort::api
