// /v1/messages and /v1/messages/count_tokens over a real server and a FakeEngine: the
// message object, the named SSE events in the order the SDK needs, and Anthropic's error
// shape for every failure (bad input, unknown model, missing key, unknown path).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/api_fixture.h"
#include "api/sse_test_util.h"

namespace cohort::api {
namespace {

using api_test::parse_sse;
using nlohmann::json;

class AnthropicTest : public api_test::ApiFixture {};

constexpr const char* kPath = "/v1/messages?beta=true";

TEST_F(AnthropicTest, WholeMessage) {
  auto r = post(kPath, R"({"model":"fake-model","max_tokens":100,
      "system":[{"type":"text","text":"Be kind."},{"type":"text","text":"Be brief."}],
      "messages":[{"role":"user","content":"Hi"},
                  {"role":"assistant","content":[{"type":"thinking","thinking":"hm"},
                                                 {"type":"text","text":"Hello"}]},
                  {"role":"user","content":[{"type":"text","text":"More"}]}],
      "temperature":0.5,"top_k":7,"stop_sequences":["zzz"],"metadata":{"user_id":"u"},
      "thinking":{"type":"disabled"},"tool_choice":{"type":"auto"}})",
                {{"x-api-key", "anything"}, {"anthropic-version", "2023-06-01"}});
  ASSERT_EQ(r.status, 200) << r.body;
  json j = parse(r);
  const std::string prompt =
      "system: Be kind.\nBe brief.\nuser: Hi\nassistant: Hello\nuser: More\n";
  EXPECT_EQ(j["type"], "message");
  EXPECT_EQ(j["role"], "assistant");
  EXPECT_EQ(j["id"].get<std::string>().rfind("msg_", 0), 0u);
  EXPECT_EQ(j["model"], "fake-model");
  ASSERT_EQ(j["content"].size(), 1u);
  EXPECT_EQ(j["content"][0], json({{"type", "text"}, {"text", prompt}}));
  EXPECT_EQ(j["stop_reason"], "end_turn");
  EXPECT_TRUE(j["stop_sequence"].is_null());
  EXPECT_EQ(j["usage"]["input_tokens"], prompt.size());
  EXPECT_EQ(j["usage"]["output_tokens"], prompt.size());
  const auto seen = engine_.last();
  EXPECT_EQ(seen.max_tokens, 100);
  EXPECT_FLOAT_EQ(seen.temperature, 0.5f);
  EXPECT_EQ(seen.top_k, 7);
  EXPECT_EQ(seen.stop, std::vector<std::string>{"zzz"});
}

TEST_F(AnthropicTest, StopReasons) {
  auto len = parse(post(kPath, R"({"model":"fake-model","max_tokens":3,
      "messages":[{"role":"user","content":"abcdef"}]})"));
  EXPECT_EQ(len["stop_reason"], "max_tokens");
  auto seq = parse(post(kPath, R"({"model":"fake-model","max_tokens":50,
      "stop_sequences":["cd"],"messages":[{"role":"user","content":"abcdef"}]})"));
  EXPECT_EQ(seq["stop_reason"], "stop_sequence");
  EXPECT_EQ(seq["stop_sequence"], "cd");
  EXPECT_EQ(seq["content"][0]["text"], "user: ab");
}

TEST_F(AnthropicTest, StreamedEventsInOrder) {
  auto r = post(kPath, R"({"model":"fake-model","max_tokens":100,"stream":true,
      "messages":[{"role":"user","content":"abc"}]})");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/event-stream");
  const auto events = parse_sse(r.body);
  const std::string text = "user: abc\n";
  std::vector<std::string> names;
  std::string got;
  for (const auto& e : events) {
    json d = e.json();
    ASSERT_TRUE(d.is_object()) << e.data;
    EXPECT_EQ(d["type"], e.event);  // the event line names what data carries
    if (names.empty() || names.back() != e.event) names.push_back(e.event);
    if (e.event == "content_block_delta") {
      EXPECT_EQ(d["index"], 0);
      EXPECT_EQ(d["delta"]["type"], "text_delta");
      got += d["delta"]["text"].get<std::string>();
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"message_start", "content_block_start", "ping",
                                             "content_block_delta", "content_block_stop",
                                             "message_delta", "message_stop"}));
  EXPECT_EQ(got, text);
  json start = events[0].json()["message"];
  EXPECT_EQ(start["content"], json::array());
  EXPECT_TRUE(start["stop_reason"].is_null());
  EXPECT_EQ(start["usage"]["input_tokens"], text.size());
  json delta = events[events.size() - 2].json();
  EXPECT_EQ(delta["delta"]["stop_reason"], "end_turn");
  EXPECT_EQ(delta["usage"]["output_tokens"], text.size());
}

TEST_F(AnthropicTest, ErrorMidStreamIsAnErrorEvent) {
  engine_.set_fail_after_text(Status::internal("runtime: broke"));
  auto r = post(kPath, R"({"model":"fake-model","max_tokens":9,"stream":true,
      "messages":[{"role":"user","content":"x"}]})");
  const auto events = parse_sse(r.body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().event, "error");
  json e = events.back().json();
  EXPECT_EQ(e["type"], "error");
  EXPECT_EQ(e["error"]["type"], "api_error");
  EXPECT_EQ(e["error"]["message"], "runtime: broke");
}

TEST_F(AnthropicTest, CountTokens) {
  auto r = post("/v1/messages/count_tokens", R"({"model":"fake-model",
      "system":"S","messages":[{"role":"user","content":"Hello"}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(parse(r), json({{"input_tokens", std::string("system: S\nuser: Hello\n").size()}}));
  EXPECT_EQ(engine_.calls_.load(), 0);
}

TEST_F(AnthropicTest, ErrorsAreAnthropicShaped) {
  struct Case {
    const char* path;
    const char* body;
    int status;
    const char* type;
  };
  const Case cases[] = {
      {kPath, "{", 400, "invalid_request_error"},
      {kPath, R"({"max_tokens":5,"messages":[{"role":"user","content":"x"}]})", 400,
       "invalid_request_error"},
      {kPath, R"({"model":"fake-model","messages":[{"role":"user","content":"x"}]})", 400,
       "invalid_request_error"},
      {kPath, R"({"model":"fake-model","max_tokens":0,"messages":[{"role":"user","content":"x"}]})",
       400, "invalid_request_error"},
      {kPath, R"({"model":"fake-model","max_tokens":5,"messages":[]})", 400,
       "invalid_request_error"},
      {kPath,
       R"({"model":"fake-model","max_tokens":5,"messages":[{"role":"system","content":"x"}]})", 400,
       "invalid_request_error"},
      {kPath, R"({"model":"fake-model","max_tokens":5,"messages":[{"role":"user","content":[
          {"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA"}}]}]})",
       400, "invalid_request_error"},
      {kPath, R"({"model":"fake-model","max_tokens":5,"messages":[{"role":"user","content":"x"}],
          "tools":[{"type":"web_search_20250305","name":"web_search"}]})",
       400, "invalid_request_error"},
      {kPath, R"({"model":"fake-model","max_tokens":5,"messages":[{"role":"user","content":"x"}],
          "temperature":1.5})",
       400, "invalid_request_error"},
      {kPath, R"({"model":"fake-model","max_tokens":5,"messages":[{"role":"user","content":"x"}],
          "stop_sequences":"x"})",
       400, "invalid_request_error"},
      {kPath,
       R"({"model":"claude-opus","max_tokens":5,"messages":[{"role":"user","content":"x"}]})", 404,
       "not_found_error"},
      {"/v1/messages/batches", "{}", 404, "not_found_error"},
      {"/v1/messages/count_tokens", R"({"model":"fake-model"})", 400, "invalid_request_error"},
  };
  for (const Case& c : cases) {
    auto r = post(c.path, c.body);
    EXPECT_EQ(r.status, c.status) << c.body << " -> " << r.body;
    json j = parse(r);
    EXPECT_EQ(j["type"], "error") << c.body;
    EXPECT_EQ(j["error"]["type"], c.type) << c.body;
    EXPECT_FALSE(j["error"]["message"].get<std::string>().empty()) << c.body;
  }
  EXPECT_EQ(engine_.calls_.load(), 0);
}

TEST_F(AnthropicTest, ApiKeyAsXApiKeyOrBearer) {
  server_->stop();
  ServerOptions options;
  options.api_key = "sk-1";
  start(options);
  const std::string body =
      R"({"model":"fake-model","max_tokens":5,"messages":[{"role":"user","content":"x"}]})";
  auto denied = post(kPath, body);
  EXPECT_EQ(denied.status, 401);
  EXPECT_EQ(parse(denied)["error"]["type"], "authentication_error");
  EXPECT_EQ(post(kPath, body, {{"x-api-key", "sk-1"}, {"anthropic-version", "2026-10-21"}}).status,
            200);
  EXPECT_EQ(post(kPath, body, {{"Authorization", "Bearer sk-1"}}).status, 200);
}

}  // namespace
}  // namespace cohort::api
