// The framing helpers: every SSE event ends in a blank line, Anthropic's carry an event:
// line, NDJSON lines end in one newline, and invalid UTF-8 never breaks a frame.
#include "api/sse.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace cohort::api {
namespace {

using nlohmann::json;

TEST(SseFraming, DataEventsAndDone) {
  EXPECT_EQ(sse_data(json{{"a", 1}}), "data: {\"a\":1}\n\n");
  EXPECT_EQ(sse_event("ping", json{{"type", "ping"}}),
            "event: ping\ndata: {\"type\":\"ping\"}\n\n");
  EXPECT_EQ(sse_done(), "data: [DONE]\n\n");
}

TEST(SseFraming, NewlinesInsideTextStayEscaped) {
  // A raw newline in data would end the event early; JSON escapes it.
  const std::string ev = sse_data(json{{"t", "a\n\nb"}});
  EXPECT_EQ(ev.find("\n\n"), ev.size() - 2);
  EXPECT_EQ(ndjson_line(json{{"t", "x\ny"}}), "{\"t\":\"x\\ny\"}\n");
}

TEST(SseFraming, InvalidUtf8IsReplaced) {
  EXPECT_EQ(sse_data(json{{"t", "\xE2\x82"}}), "data: {\"t\":\"\xEF\xBF\xBD\"}\n\n");
}

TEST(SseFraming, ResponsesCarryStreamHeaders) {
  HttpResponse sse = sse_response([](StreamWriter&) {});
  EXPECT_EQ(sse.status, 200);
  EXPECT_EQ(sse.content_type, "text/event-stream");
  EXPECT_EQ(sse.header("cache-control").value_or(""), "no-cache");
  EXPECT_TRUE(static_cast<bool>(sse.stream));
  HttpResponse nd = ndjson_response([](StreamWriter&) {});
  EXPECT_EQ(nd.content_type, "application/x-ndjson");
  EXPECT_TRUE(static_cast<bool>(nd.stream));
}

}  // namespace
}  // namespace cohort::api
