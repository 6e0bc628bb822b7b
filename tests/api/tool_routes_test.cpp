// Tools through the three dialects, with a fake engine that writes a Hermes-style call (the
// format a template without tool syntax falls back to): the call becomes OpenAI tool_calls,
// an Anthropic tool_use block and Ollama message.tool_calls, whole and streamed, and the
// text before it stays content. A forced call reaches the engine as a constraint.
#include <gtest/gtest.h>

#include <string>

#include "api_fixture.h"
#include "sse_test_util.h"

namespace cohort::api_test {
namespace {

using nlohmann::json;

const std::string kOutput =
    "Checking. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}"
    "</tool_call>";
const std::string kTools =
    R"([{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
        "properties":{"city":{"type":"string"}}}}}])";

class ToolRoutesTest : public ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    engine_.set_output(kOutput);
  }
};

TEST_F(ToolRoutesTest, OpenAiWholeAndStreamed) {
  const std::string body =
      R"({"messages":[{"role":"user","content":"weather?"}],"tools":)" + kTools + "}";
  auto r = post("/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "tool_calls");
  const json msg = j["choices"][0]["message"];
  EXPECT_EQ(msg["content"], "Checking.");
  ASSERT_EQ(msg["tool_calls"].size(), 1u);
  EXPECT_EQ(msg["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(msg["tool_calls"][0]["function"]["arguments"].get<std::string>()),
            json({{"city", "Oslo"}}));
  EXPECT_FALSE(engine_.last().constraint.has_value());  // auto: the model chooses

  r = post("/v1/chat/completions", body.substr(0, body.size() - 1) + R"(,"stream":true})");
  ASSERT_EQ(r.status, 200);
  std::string content, finish;
  json calls;
  for (const auto& ev : parse_sse(r.body)) {
    if (ev.data == "[DONE]") continue;
    const json c = json::parse(ev.data)["choices"][0];
    content += c["delta"].value("content", "");
    if (c["delta"].contains("tool_calls")) calls = c["delta"]["tool_calls"];
    if (!c["finish_reason"].is_null()) finish = c["finish_reason"];
  }
  EXPECT_EQ(content, "Checking. ");  // the call's text never streams as content
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]["index"], 0);
  EXPECT_EQ(calls[0]["function"]["name"], "get_weather");
  EXPECT_EQ(finish, "tool_calls");
}

TEST_F(ToolRoutesTest, OpenAiForcedCallIsConstrained) {
  post("/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"tools":)" + kTools +
                                   R"(,"tool_choice":"required"})");
  const runtime::CompletionRequest last = engine_.last();
  const auto& c = last.constraint;
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->accepts(R"({"name": "get_weather", "arguments": {"city")"));
  EXPECT_FALSE(c->accepts(R"({"name": "other")"));
}

TEST_F(ToolRoutesTest, AnthropicWholeAndStreamed) {
  const std::string body =
      R"({"model":"fake-model","max_tokens":500,"messages":[{"role":"user","content":"w?"}],
          "tools":[{"name":"get_weather","input_schema":{"type":"object"}}])";
  auto r = post("/v1/messages", body + "}");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  EXPECT_EQ(j["stop_reason"], "tool_use");
  ASSERT_EQ(j["content"].size(), 2u);
  EXPECT_EQ(j["content"][0], json({{"type", "text"}, {"text", "Checking."}}));
  EXPECT_EQ(j["content"][1]["type"], "tool_use");
  EXPECT_EQ(j["content"][1]["input"], json({{"city", "Oslo"}}));

  r = post("/v1/messages", body + R"(,"stream":true})");
  std::string partial_json, stop_reason;
  int tool_starts = 0;
  for (const auto& ev : parse_sse(r.body)) {
    const json d = json::parse(ev.data);
    if (ev.event == "content_block_start" && d["content_block"]["type"] == "tool_use") {
      ++tool_starts;
      EXPECT_EQ(d["index"], 1);
    }
    if (ev.event == "content_block_delta" && d["delta"]["type"] == "input_json_delta") {
      partial_json += d["delta"]["partial_json"].get<std::string>();
    }
    if (ev.event == "message_delta") stop_reason = d["delta"]["stop_reason"];
  }
  EXPECT_EQ(tool_starts, 1);
  EXPECT_EQ(json::parse(partial_json), json({{"city", "Oslo"}}));
  EXPECT_EQ(stop_reason, "tool_use");
}

TEST_F(ToolRoutesTest, AnthropicToolHistoryReachesTheTemplate) {
  engine_.set_output("ok");
  auto r = post("/v1/messages", R"({"model":"fake-model","max_tokens":5,"messages":[
      {"role":"user","content":"w?"},
      {"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},
      {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny"}]}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  // The fake template writes "role: content" per message: the result is a "tool" message.
  EXPECT_NE(engine_.last().prompt.find("tool: sunny"), std::string::npos) << engine_.last().prompt;
}

TEST_F(ToolRoutesTest, OllamaWholeAndStreamed) {
  const std::string body =
      R"({"model":"fake-model","messages":[{"role":"user","content":"w?"}],"tools":)" + kTools;
  auto r = post("/api/chat", body + R"(,"stream":false})");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  EXPECT_EQ(j["message"]["content"], "Checking.");
  ASSERT_EQ(j["message"]["tool_calls"].size(), 1u);
  EXPECT_EQ(j["message"]["tool_calls"][0]["function"]["arguments"], json({{"city", "Oslo"}}));

  r = post("/api/chat", body + "}");
  const auto lines = parse_ndjson(r.body);
  ASSERT_FALSE(lines.empty());
  std::string content;
  for (const json& l : lines) content += l["message"].value("content", "");
  EXPECT_EQ(content, "Checking. ");
  EXPECT_EQ(lines.back()["message"]["tool_calls"][0]["function"]["name"], "get_weather");
}

TEST_F(ToolRoutesTest, JsonModesAreConstrained) {
  post("/v1/chat/completions",
       R"({"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}})");
  ASSERT_TRUE(engine_.last().constraint.has_value());
  EXPECT_FALSE(engine_.last().constraint->accepts("["));
  post("/api/chat", R"({"model":"fake-model","format":"json","stream":false,
                        "messages":[{"role":"user","content":"x"}]})");
  ASSERT_TRUE(engine_.last().constraint.has_value());
}

}  // namespace
}  // namespace cohort::api_test
