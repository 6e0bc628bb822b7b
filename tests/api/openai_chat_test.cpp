// /v1/chat/completions and streamed /v1/completions over a real server and a FakeEngine:
// whole answers, the SSE chunk sequence clients rely on, and every error shape.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "api/api_fixture.h"
#include "api/sse_test_util.h"

namespace cohort::api {
namespace {

using api_test::parse_sse;
using nlohmann::json;

class OpenAiChatTest : public api_test::ApiFixture {};

TEST_F(OpenAiChatTest, WholeAnswer) {
  auto r = post("/v1/chat/completions", R"({"model":"fake-model","messages":[
      {"role":"developer","content":"Be brief."},
      {"role":"user","content":[{"type":"text","text":"Hi"},{"type":"text","text":"there"}]}],
      "max_completion_tokens":100,"temperature":0.3,"top_p":0.5,"seed":3,"stop":"zz",
      "frequency_penalty":0.5,"presence_penalty":-0.5,"min_p":0.1,"top_k":5,
      "n":1,"logprobs":false,"tools":[],"tool_choice":"auto","response_format":{"type":"text"},
      "store":false,"metadata":{"a":"b"},"reasoning_effort":"low","parallel_tool_calls":true})");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = parse(r);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(j["model"], "fake-model");
  const std::string prompt = "system: Be brief.\nuser: Hi\nthere\n";
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], prompt);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["usage"]["prompt_tokens"], prompt.size());
  EXPECT_EQ(j["usage"]["completion_tokens"], prompt.size());
  EXPECT_EQ(j["usage"]["total_tokens"], 2 * prompt.size());
  const runtime::CompletionRequest seen = engine_.last();
  EXPECT_TRUE(seen.prompt_is_chat);
  EXPECT_EQ(seen.max_tokens, 100);
  EXPECT_FLOAT_EQ(seen.temperature, 0.3f);
  EXPECT_FLOAT_EQ(seen.top_p, 0.5f);
  EXPECT_FLOAT_EQ(seen.min_p, 0.1f);
  EXPECT_EQ(seen.top_k, 5);
  EXPECT_FLOAT_EQ(seen.frequency_penalty, 0.5f);
  EXPECT_FLOAT_EQ(seen.presence_penalty, -0.5f);
  EXPECT_EQ(seen.seed, std::optional<uint64_t>(3));
  EXPECT_EQ(seen.stop, std::vector<std::string>{"zz"});
}

TEST_F(OpenAiChatTest, MaxTokensAbsentMeansNoLimitAndLengthFinish) {
  ASSERT_EQ(post("/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}]})").status,
            200);
  EXPECT_LT(engine_.last().max_tokens, 0);
  auto r = post("/v1/chat/completions",
                R"({"messages":[{"role":"user","content":"abcdef"}],"max_tokens":4})");
  json j = parse(r);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["completion_tokens"], 4);
}

TEST_F(OpenAiChatTest, StreamedChunksInOrder) {
  auto r = post("/v1/chat/completions", R"({"model":"fake-model:latest","stream":true,
      "stream_options":{"include_usage":true},"messages":[{"role":"user","content":"abc"}]})",
                {{"Origin", "http://s.test"}});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/event-stream");
  EXPECT_EQ(r.header("cache-control"), "no-cache");
  EXPECT_EQ(r.header("access-control-allow-origin"), "http://s.test");
  const auto events = parse_sse(r.body);
  const std::string text = "user: abc\n";
  // role, one per byte, finish, usage, [DONE]
  ASSERT_EQ(events.size(), 1 + text.size() + 1 + 1 + 1) << r.body;
  std::string id;
  std::string got;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    json c = events[i].json();
    ASSERT_TRUE(c.is_object()) << events[i].data;
    EXPECT_EQ(events[i].event, "");
    EXPECT_EQ(c["object"], "chat.completion.chunk");
    EXPECT_EQ(c["model"], "fake-model:latest");
    if (i == 0) id = c["id"];
    EXPECT_EQ(c["id"], id);
    if (i + 2 == events.size()) {  // the usage chunk
      EXPECT_TRUE(c["choices"].empty());
      EXPECT_EQ(c["usage"]["completion_tokens"], text.size());
      EXPECT_EQ(c["usage"]["total_tokens"], 2 * text.size());
      continue;
    }
    EXPECT_FALSE(c.contains("usage"));
    const json& choice = c["choices"][0];
    EXPECT_EQ(choice["index"], 0);
    if (i == 0) {
      EXPECT_EQ(choice["delta"], json({{"role", "assistant"}, {"content", ""}}));
      EXPECT_TRUE(choice["finish_reason"].is_null());
    } else if (i + 3 == events.size()) {
      EXPECT_EQ(choice["delta"], json::object());
      EXPECT_EQ(choice["finish_reason"], "stop");
    } else {
      EXPECT_TRUE(choice["finish_reason"].is_null());
      got += choice["delta"]["content"].get<std::string>();
    }
  }
  EXPECT_EQ(got, text);
  EXPECT_EQ(events.back().data, "[DONE]");
}

TEST_F(OpenAiChatTest, StreamWithoutUsageHasNoUsageChunk) {
  auto r = post("/v1/chat/completions",
                R"({"stream":true,"messages":[{"role":"user","content":"a"}],"max_tokens":2})");
  const auto events = parse_sse(r.body);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back().data, "[DONE]");
  json last = events[events.size() - 2].json();
  EXPECT_EQ(last["choices"][0]["finish_reason"], "length");
  for (const auto& e : events) EXPECT_EQ(e.data.find("usage"), std::string::npos);
}

TEST_F(OpenAiChatTest, CompletionsStream) {
  auto r = post("/v1/completions",
                R"({"prompt":"hey","stream":true,"stream_options":{"include_usage":true}})");
  ASSERT_EQ(r.status, 200);
  const auto events = parse_sse(r.body);
  ASSERT_EQ(events.size(), 3u + 1 + 1 + 1);
  std::string got;
  for (size_t i = 0; i < 3; ++i) {
    json c = events[i].json();
    EXPECT_EQ(c["object"], "text_completion");
    EXPECT_TRUE(c["choices"][0]["finish_reason"].is_null());
    got += c["choices"][0]["text"].get<std::string>();
  }
  EXPECT_EQ(got, "hey");
  EXPECT_EQ(events[3].json()["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(events[4].json()["usage"]["prompt_tokens"], 3);
  EXPECT_EQ(events[5].data, "[DONE]");
}

TEST_F(OpenAiChatTest, ModelsById) {
  auto ok = get("/v1/models/fake-model");
  ASSERT_EQ(ok.status, 200);
  EXPECT_EQ(parse(ok)["id"], "fake-model");
  EXPECT_EQ(parse(ok)["object"], "model");
  auto missing = get("/v1/models/gpt-4o");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(parse(missing)["error"]["code"], "model_not_found");
  EXPECT_EQ(parse(missing)["error"]["type"], "invalid_request_error");
}

TEST_F(OpenAiChatTest, ErrorsAreOpenAiShaped) {
  struct Case {
    const char* body;
    int status;
    const char* param;  // nullptr: null
    const char* code;   // nullptr: null
  };
  const Case cases[] = {
      {"{", 400, nullptr, nullptr},
      {"[]", 400, nullptr, nullptr},
      {R"({})", 400, "messages", nullptr},
      {R"({"messages":[]})", 400, "messages", nullptr},
      {R"({"messages":"hi"})", 400, "messages", nullptr},
      {R"({"messages":[{"role":"wizard","content":"x"}]})", 400, "messages", nullptr},
      {R"({"messages":[{"content":"x"}]})", 400, "messages", nullptr},
      {R"({"messages":[{"role":"user","content":5}]})", 400, "messages", nullptr},
      {R"({"messages":[{"role":"user","content":[{"type":"image_url",
          "image_url":{"url":"data:image/png;base64,AA"}}]}]})",
       400, "messages", nullptr},
      {R"({"messages":[{"role":"user","content":"x"}],"n":2})", 400, "n", nullptr},
      {R"({"messages":[{"role":"user","content":"x"}],"logprobs":true})", 400, "logprobs", nullptr},
      {R"({"messages":[{"role":"user","content":"x"}],"top_logprobs":3})", 400, "top_logprobs",
       nullptr},
      {R"({"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function",
          "function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}})",
       400, "tool_choice", nullptr},
      {R"({"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function",
          "function":{"description":"no name"}}]})",
       400, "tools", nullptr},
      {R"({"messages":[{"role":"user","content":"x"}],"tool_choice":"required"})", 400,
       "tool_choice", nullptr},
      {R"({"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema",
          "json_schema":{"name":"x","schema":{}}}})",
       400, "response_format", nullptr},
      {R"({"messages":[{"role":"user","content":"x"}],"temperature":"warm"})", 400, "temperature",
       nullptr},
      {R"({"messages":[{"role":"user","content":"x"}],"max_tokens":"9"})", 400, "max_tokens",
       nullptr},
      {R"({"messages":[{"role":"user","content":"x"}],"stop":[1]})", 400, "stop", nullptr},
      {R"({"messages":[{"role":"user","content":"x"}],"stream":"yes"})", 400, "stream", nullptr},
      {R"({"messages":[{"role":"user","content":"x"}],"model":"gpt-4o"})", 404, "model",
       "model_not_found"},
      {R"({"messages":[{"role":"user","content":"REJECT"}]})", 400, "messages", nullptr},
  };
  for (const Case& c : cases) {
    auto r = post("/v1/chat/completions", c.body, {{"Origin", "http://e.test"}});
    EXPECT_EQ(r.status, c.status) << c.body << " -> " << r.body;
    EXPECT_EQ(r.header("content-type"), "application/json") << c.body;
    EXPECT_EQ(r.header("access-control-allow-origin"), "http://e.test") << c.body;
    json j = parse(r);
    ASSERT_TRUE(j.contains("error")) << c.body << " -> " << r.body;
    EXPECT_EQ(j["error"]["type"], "invalid_request_error") << c.body;
    EXPECT_FALSE(j["error"]["message"].get<std::string>().empty()) << c.body;
    EXPECT_EQ(j["error"]["param"], c.param ? json(c.param) : json(nullptr)) << c.body;
    EXPECT_EQ(j["error"]["code"], c.code ? json(c.code) : json(nullptr)) << c.body;
  }
  EXPECT_EQ(engine_.calls_.load(), 0);
}

TEST_F(OpenAiChatTest, ContextOverflowIsJson400EvenWhenStreaming) {
  engine_.context_length_ = 8;
  for (const char* stream : {"false", "true"}) {
    auto r =
        post("/v1/chat/completions",
             std::string(R"({"messages":[{"role":"user","content":"far too long"}],"stream":)") +
                 stream + "}");
    EXPECT_EQ(r.status, 400) << stream;
    EXPECT_EQ(r.header("content-type"), "application/json");
    EXPECT_EQ(parse(r)["error"]["code"], "context_length_exceeded");
  }
  EXPECT_EQ(engine_.calls_.load(), 0);
}

TEST_F(OpenAiChatTest, NotReadyIs503) {
  engine_.ready_ = false;
  auto r = post("/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(parse(r)["error"]["type"], "server_error");
  EXPECT_FALSE(r.header("retry-after").empty());
}

TEST_F(OpenAiChatTest, ErrorAfterTheStreamStartedIsAnErrorEvent) {
  engine_.set_fail_after_text(Status::unavailable("cluster: lost node 1"));
  auto r = post("/v1/chat/completions",
                R"({"stream":true,"messages":[{"role":"user","content":"ab"}]})");
  ASSERT_EQ(r.status, 200);
  const auto events = parse_sse(r.body);
  ASSERT_FALSE(events.empty());
  json last = events.back().json();
  EXPECT_EQ(last["error"]["message"], "cluster: lost node 1");
  EXPECT_EQ(last["error"]["type"], "server_error");
  EXPECT_EQ(r.body.find("[DONE]"), std::string::npos);
}

TEST_F(OpenAiChatTest, ClientGoneBeforeTheStreamStartsGeneratesNothing) {
  {
    cohort::testing::HttpClient client(port_);
    ASSERT_TRUE(
        client.send_request("POST", "/v1/chat/completions",
                            R"({"stream":true,"messages":[{"role":"user","content":"x"}]})"));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // Either nothing ran or what ran was cancelled; nothing ran to the end.
  EXPECT_EQ(engine_.calls_.load(), engine_.cancelled_.load());
}

TEST_F(OpenAiChatTest, ClientGoneCancelsGeneration) {
  engine_.set_output(std::string(200000, 'x'));
  {
    cohort::testing::HttpClient client(port_);
    ASSERT_TRUE(
        client.send_request("POST", "/v1/chat/completions",
                            R"({"stream":true,"messages":[{"role":"user","content":"x"}]})"));
    ASSERT_TRUE(client.wait_for("\"content\":\"x\""));  // generation is under way
    client.close();
  }
  for (int i = 0; i < 250 && engine_.cancelled_.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(engine_.cancelled_.load(), 1) << "calls " << engine_.calls_.load();
}

}  // namespace
}  // namespace cohort::api
