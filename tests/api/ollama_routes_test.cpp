// The Ollama routes over a real server and a FakeEngine: the probes clients make (/,
// /api/version, /api/tags, /api/ps, /api/show), NDJSON chat and generate (streamed by
// default, whole with stream:false), options, and {"error": ...} for every failure.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "api/api_fixture.h"
#include "api/sse_test_util.h"

namespace cohort::api {
namespace {

using api_test::parse_ndjson;
using nlohmann::json;

class OllamaTest : public api_test::ApiFixture {};

// Digits and the separators of `shape` at the same places: '9' stands for any digit.
// (No std::regex: GCC 12 warns inside it under the sanitizers.)
bool has_shape(const std::string& s, const std::string& shape) {
  if (s.size() != shape.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (shape[i] == '9' ? !std::isdigit(static_cast<unsigned char>(s[i])) : s[i] != shape[i]) {
      return false;
    }
  }
  return true;
}

bool is_semver(const std::string& v) {
  int parts = 0;
  size_t digits = 0;
  for (char c : v + ".") {
    if (c == '.') {
      if (digits == 0) return false;
      ++parts;
      digits = 0;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      ++digits;
    } else {
      return false;
    }
  }
  return parts == 3;
}

TEST_F(OllamaTest, RootVersionTagsPs) {
  auto root = get("/");
  EXPECT_EQ(root.status, 200);
  EXPECT_EQ(root.body, "Ollama is running");
  EXPECT_EQ(cohort::testing::http_request(port_, "HEAD", "/").status, 200);
  auto version = parse(get("/api/version"));
  EXPECT_TRUE(is_semver(version["version"].get<std::string>())) << version;
  for (const char* path : {"/api/tags", "/api/ps"}) {
    json j = parse(get(path));
    ASSERT_EQ(j["models"].size(), 1u) << path;
    const json& m = j["models"][0];
    EXPECT_EQ(m["name"], "fake-model");
    EXPECT_EQ(m["model"], "fake-model");
    EXPECT_EQ(m["size"], 1234);
    EXPECT_EQ(m["digest"], "0123456789abcdef");
    EXPECT_EQ(m["details"]["family"], "llama");
    EXPECT_EQ(m["details"]["format"], "gguf");
    EXPECT_EQ(m["details"]["parameter_size"], "260K");
    EXPECT_EQ(m["details"]["quantization_level"], "F32");
    EXPECT_TRUE(has_shape(m["modified_at"], "9999-99-99T99:99:99.999999999Z")) << m;
    EXPECT_EQ(m.contains("expires_at"), std::string(path) == "/api/ps");
  }
}

TEST_F(OllamaTest, Show) {
  for (const char* body : {R"({"model":"fake-model"})", R"({"name":"fake-model:latest"})"}) {
    auto r = post("/api/show", body);
    ASSERT_EQ(r.status, 200) << body;
    json j = parse(r);
    EXPECT_EQ(j["details"]["family"], "llama");
    EXPECT_EQ(j["model_info"]["general.architecture"], "llama");
    EXPECT_EQ(j["model_info"]["llama.context_length"], 4096);
    EXPECT_NE(j["parameters"].get<std::string>().find("num_ctx 4096"), std::string::npos);
    EXPECT_TRUE(j["modelfile"].is_string());
    EXPECT_TRUE(j["template"].is_string());
    EXPECT_EQ(j["capabilities"], json::array({"completion"}));
  }
  auto missing = post("/api/show", R"({"model":"llama3"})");
  EXPECT_EQ(missing.status, 404);
  EXPECT_TRUE(parse(missing)["error"].is_string());
}

TEST_F(OllamaTest, ChatStreamsNdjsonByDefault) {
  auto r = post("/api/chat", R"({"model":"fake-model","messages":[
      {"role":"system","content":"S"},{"role":"user","content":"hi"}],
      "options":{"temperature":0.2,"top_k":3,"top_p":0.7,"num_predict":50,"seed":9,
                 "stop":["qq"],"num_ctx":8192},"keep_alive":"5m"})");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "application/x-ndjson");
  const auto lines = parse_ndjson(r.body);
  const std::string text = "system: S\nuser: hi\n";
  ASSERT_EQ(lines.size(), text.size() + 1) << r.body;
  std::string got;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["model"], "fake-model");
    EXPECT_EQ(lines[i]["done"], false);
    EXPECT_EQ(lines[i]["message"]["role"], "assistant");
    got += lines[i]["message"]["content"].get<std::string>();
  }
  EXPECT_EQ(got, text);
  const json& last = lines.back();
  EXPECT_EQ(last["done"], true);
  EXPECT_EQ(last["done_reason"], "stop");
  EXPECT_EQ(last["prompt_eval_count"], text.size());
  EXPECT_EQ(last["eval_count"], text.size());
  for (const char* k : {"total_duration", "load_duration", "prompt_eval_duration", "eval_duration"})
    EXPECT_TRUE(last[k].is_number_integer()) << k;
  const auto seen = engine_.last();
  EXPECT_FLOAT_EQ(seen.temperature, 0.2f);
  EXPECT_EQ(seen.top_k, 3);
  EXPECT_FLOAT_EQ(seen.top_p, 0.7f);
  EXPECT_EQ(seen.max_tokens, 50);
  EXPECT_EQ(seen.seed, std::optional<uint64_t>(9));
  EXPECT_EQ(seen.stop, std::vector<std::string>{"qq"});
}

TEST_F(OllamaTest, ChatWholeAndDefaults) {
  auto r = post("/api/chat", R"({"model":"fake-model:latest","stream":false,
      "messages":[{"role":"user","content":"abc"}]})");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "application/json");
  json j = parse(r);
  EXPECT_EQ(j["message"]["content"], "user: abc\n");
  EXPECT_EQ(j["done"], true);
  EXPECT_EQ(j["done_reason"], "stop");
  EXPECT_LT(engine_.last().max_tokens, 0);  // num_predict defaults to no limit
  EXPECT_FLOAT_EQ(engine_.last().temperature, 0.8f);
}

TEST_F(OllamaTest, Generate) {
  auto r = post("/api/generate", R"({"model":"fake-model","prompt":"abcdef","system":"S",
      "stream":false,"options":{"num_predict":4}})");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = parse(r);
  EXPECT_EQ(j["response"], "syst");
  EXPECT_EQ(j["done_reason"], "length");
  EXPECT_EQ(j["eval_count"], 4);
  auto raw = post("/api/generate", R"({"model":"fake-model","prompt":"xyz","raw":true})");
  const auto lines = parse_ndjson(raw.body);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0]["response"], "x");
  EXPECT_FALSE(engine_.last().prompt_is_chat);
  EXPECT_EQ(lines[3]["done"], true);
  auto load = parse(post("/api/generate", R"({"model":"fake-model"})"));
  EXPECT_EQ(load["done"], true);
  EXPECT_EQ(load["done_reason"], "load");
}

TEST_F(OllamaTest, ErrorsAreOllamaShaped) {
  struct Case {
    const char* path;
    const char* body;
    int status;
  };
  const Case cases[] = {
      {"/api/chat", "{", 400},
      {"/api/chat", R"({"messages":[]})", 400},
      {"/api/chat", R"({"model":"fake-model","messages":"x"})", 400},
      {"/api/chat", R"({"model":"fake-model","messages":[{"role":"user","content":"x"}],
          "format":{"type":"object"}})",
       400},
      {"/api/chat", R"({"model":"fake-model","messages":[{"role":"user","content":"x",
          "images":["AA"]}]})",
       400},
      {"/api/chat", R"({"model":"fake-model","messages":[{"role":"user","content":"x"}],
          "tools":[{"type":"function"}]})",
       400},
      {"/api/chat", R"({"model":"fake-model","messages":[{"role":"user","content":"x"}],
          "options":{"temperature":"hot"}})",
       400},
      {"/api/chat", R"({"model":"fake-model","messages":[{"role":"user","content":"x"}],
          "think":true})",
       400},
      {"/api/chat", R"({"model":"mistral","messages":[{"role":"user","content":"x"}]})", 404},
      {"/api/generate", R"({"model":"fake-model","prompt":"x","suffix":"y"})", 400},
      {"/api/nothing", "{}", 404},
  };
  for (const Case& c : cases) {
    auto r = post(c.path, c.body);
    EXPECT_EQ(r.status, c.status) << c.body << " -> " << r.body;
    json j = parse(r);
    ASSERT_TRUE(j.is_object()) << r.body;
    EXPECT_TRUE(j["error"].is_string()) << c.body << " -> " << r.body;
    EXPECT_EQ(j.size(), 1u) << r.body;
  }
  EXPECT_EQ(engine_.calls_.load(), 0);
}

TEST_F(OllamaTest, ErrorMidStreamIsAnErrorLine) {
  engine_.set_fail_after_text(Status::unavailable("cluster: lost node 3"));
  auto r =
      post("/api/chat", R"({"model":"fake-model","messages":[{"role":"user","content":"x"}]})");
  const auto lines = parse_ndjson(r.body);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(), json({{"error", "cluster: lost node 3"}}));
}

}  // namespace
}  // namespace cohort::api
