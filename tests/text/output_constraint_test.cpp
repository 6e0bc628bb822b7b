// OutputConstraint: the shapes constrained decoding produces, and the sampler honouring it.
#include "text/output_constraint.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "text/sampler.h"

namespace cohort::text {
namespace {

TEST(OutputConstraint, ToolCallAcceptsOnlyTheToolsNamed) {
  OutputConstraint c = OutputConstraint::tool_call(
      {{"get_weather", std::nullopt}, {"get", std::nullopt}, {"say \"hi\"", std::nullopt}});
  EXPECT_TRUE(c.accepts("{\"name\": \"get"));
  EXPECT_TRUE(c.accepts("{\"name\": \"get\""));
  EXPECT_TRUE(c.accepts("{\"name\": \"get_weather\", \"arguments\": {"));
  EXPECT_TRUE(c.accepts("{\"name\": \"say \\\"hi\\\"\""));  // the name is JSON-escaped
  EXPECT_FALSE(c.accepts("{\"name\": \"got"));
  EXPECT_FALSE(c.accepts("{\"nam\": "));
  EXPECT_FALSE(c.accepts("{\"name\": \"get\", \"arguments\": ["));  // arguments are an object
  const std::string whole = R"({"name": "get_weather", "arguments": {"city": "Paris", "n": 2}})";
  c.advance(whole.substr(0, 20));
  EXPECT_FALSE(c.complete());
  ASSERT_TRUE(c.accepts(whole.substr(20)));
  c.advance(whole.substr(20));
  EXPECT_TRUE(c.complete());
  EXPECT_FALSE(c.accepts(" "));  // nothing may follow
  EXPECT_TRUE(nlohmann::json::accept(whole));
}

TEST(OutputConstraint, ArgumentsUseOnlyTheChosenToolsParameterNames) {
  OutputConstraint c = OutputConstraint::tool_call(
      {{"weather", std::vector<std::string>{"city", "unit"}}, {"now", std::vector<std::string>{}}});
  EXPECT_TRUE(c.accepts(R"({"name": "weather", "arguments": {"city": "Oslo", "unit": "C"}})"));
  EXPECT_TRUE(c.accepts(R"({"name": "weather", "arguments": {"cit)"));
  EXPECT_FALSE(c.accepts(R"({"name": "weather", "arguments": {"town)"));
  EXPECT_FALSE(c.accepts(R"({"name": "weather", "arguments": {"cityx")"));
  // Nested objects are free: only the top-level keys are the tool's.
  EXPECT_TRUE(c.accepts(R"({"name": "weather", "arguments": {"city": {"any": 1}}})"));
  // A tool without parameters takes exactly {}.
  EXPECT_TRUE(c.accepts(R"({"name": "now", "arguments": {}})"));
  EXPECT_FALSE(c.accepts(R"({"name": "now", "arguments": {")"));
}

TEST(OutputConstraint, AcceptsDoesNotChangeTheState) {
  OutputConstraint c = OutputConstraint::json_object();
  EXPECT_TRUE(c.accepts("{\"a\""));
  EXPECT_FALSE(c.accepts("}"));  // "{" has not been advanced: "}" cannot start an object
  c.advance("{");
  EXPECT_TRUE(c.accepts("}"));
  c.advance("}");
  EXPECT_TRUE(c.complete());
}

// Greedy decoding over a toy vocabulary whose favourite token is never allowed: the sampler
// must pick the best allowed one each time, and build the JSON object.
TEST(OutputConstraint, SamplerPicksOnlyAllowedTokens) {
  const std::vector<std::string> vocab = {"hello", "{", "\"a\"", ":", "1", "}", "<eos>"};
  const int32_t eos = 6;
  OutputConstraint c = OutputConstraint::json_object();
  SamplerConfig cfg;
  cfg.temperature = 0.0f;
  cfg.allow = [&](int32_t id) {
    if (id == eos) return c.complete();
    return !c.complete() && c.accepts(vocab[id]);
  };
  Sampler s(cfg, static_cast<int32_t>(vocab.size()));
  std::string out;
  for (int step = 0; step < 10; ++step) {
    // "hello" is always the most likely, then "a", 1, }, :, {.
    std::vector<float> logits = {10, 2, 6, 3, 5, 4, 0};
    const int32_t id = s.sample(logits.data());
    ASSERT_NE(id, kNoToken);
    if (id == eos) break;
    out += vocab[id];
    c.advance(vocab[id]);
  }
  EXPECT_EQ(out, "{\"a\":\"a\"}");
  EXPECT_TRUE(c.complete());
}

TEST(OutputConstraint, SamplerSaysWhenNothingIsAllowed) {
  SamplerConfig cfg;
  cfg.temperature = 0.7f;
  cfg.allow = [](int32_t) { return false; };
  Sampler s(cfg, 4);
  std::vector<float> logits = {1, 2, 3, 4};
  EXPECT_EQ(s.sample(logits.data()), kNoToken);
}

TEST(OutputConstraint, StochasticSamplingNeverPicksARefusedToken) {
  SamplerConfig cfg;
  cfg.temperature = 1.5f;
  cfg.top_k = 0;
  cfg.top_p = 1.0f;
  cfg.min_p = 0.0f;
  cfg.allow = [](int32_t id) { return id % 3 == 1; };
  Sampler s(cfg, 30);
  for (int i = 0; i < 200; ++i) {
    std::vector<float> logits(30);
    for (int j = 0; j < 30; ++j) logits[j] = std::sin(static_cast<float>(i * 31 + j));
    const int32_t id = s.sample(logits.data());
    ASSERT_EQ(id % 3, 1) << id;
  }
}

}  // namespace
}  // namespace cohort::text
