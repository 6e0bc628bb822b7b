// The embedding routes over a real server and a FakeEngine (which embeds n tokens as
// [n, 1, 2, 3] normalised): OpenAI's list shape with float and base64 encodings, usage and
// dimensions; Ollama's /api/embed and legacy /api/embeddings; errors in each dialect's shape.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "api/api_fixture.h"
#include "api/base64.h"
#include "runtime/embedding_pool.h"

namespace cohort::api {
namespace {

using nlohmann::json;

class EmbeddingRoutesTest : public api_test::ApiFixture {};

// What FakeEngine answers for an input of n tokens.
std::vector<float> fake_embedding(int64_t n, int64_t dims = 4) {
  std::vector<float> e = {static_cast<float>(n), 1, 2, 3};
  runtime::l2_normalize(e);
  if (dims < 4) runtime::shorten_embedding(e, dims);
  return e;
}

void expect_floats(const json& got, const std::vector<float>& want) {
  ASSERT_TRUE(got.is_array()) << got.dump();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(got[i].get<float>(), want[i]) << i;
}

TEST_F(EmbeddingRoutesTest, OpenAiFloatAndBase64) {
  auto r = post("/v1/embeddings", R"({"model":"fake-model","input":["abc","hello"]})");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = parse(r);
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["model"], "fake-model");
  ASSERT_EQ(j["data"].size(), 2u);
  EXPECT_EQ(j["data"][1]["object"], "embedding");
  EXPECT_EQ(j["data"][1]["index"], 1);
  expect_floats(j["data"][0]["embedding"], fake_embedding(3));
  expect_floats(j["data"][1]["embedding"], fake_embedding(5));
  EXPECT_EQ(j["usage"]["prompt_tokens"], 8);
  EXPECT_EQ(j["usage"]["total_tokens"], 8);

  auto b = post("/v1/embeddings", R"({"input":[[1,2],[3]],"encoding_format":"base64"})");
  ASSERT_EQ(b.status, 200) << b.body;
  json jb = parse(b);
  EXPECT_EQ(jb["model"], "fake-model");  // none asked: the served one
  EXPECT_EQ(jb["data"][0]["embedding"], base64_floats(fake_embedding(2)));
  EXPECT_EQ(jb["data"][1]["embedding"], base64_floats(fake_embedding(1)));
  EXPECT_EQ(jb["usage"]["prompt_tokens"], 3);
}

TEST_F(EmbeddingRoutesTest, OpenAiDimensionsShortenAndRenormalise) {
  auto r = post("/v1/embeddings", R"({"input":"abc","dimensions":2})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json e = parse(r)["data"][0]["embedding"];
  expect_floats(e, fake_embedding(3, 2));
  EXPECT_NEAR(std::hypot(e[0].get<double>(), e[1].get<double>()), 1.0, 1e-6);

  auto big = post("/v1/embeddings", R"({"input":"abc","dimensions":5})");
  EXPECT_EQ(big.status, 400);
  EXPECT_EQ(parse(big)["error"]["param"], "dimensions") << big.body;
}

TEST_F(EmbeddingRoutesTest, OpenAiErrors) {
  auto empty = post("/v1/embeddings", R"({"input":""})");
  EXPECT_EQ(empty.status, 400);
  EXPECT_EQ(parse(empty)["error"]["type"], "invalid_request_error");
  EXPECT_EQ(parse(empty)["error"]["param"], "input");
  EXPECT_EQ(post("/v1/embeddings", "{not json").status, 400);
  EXPECT_EQ(post("/v1/embeddings", R"({"input":"a","encoding_format":"hex"})").status, 400);

  auto unknown = post("/v1/embeddings", R"({"model":"gpt-x","input":"a"})");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(parse(unknown)["error"]["code"], "model_not_found");

  engine_.ready_ = false;
  EXPECT_EQ(post("/v1/embeddings", R"({"input":"a"})").status, 503);
  engine_.ready_ = true;
  EXPECT_EQ(engine_.embed_calls_.load(), 0);  // these errors came before the engine ran

  // The engine measures the input: its kOutOfRange becomes OpenAI's context error.
  auto long_input = post("/v1/embeddings", json{{"input", std::string(5000, 'a')}}.dump());
  EXPECT_EQ(long_input.status, 400);
  json e = parse(long_input)["error"];
  EXPECT_EQ(e["code"], "context_length_exceeded");
  EXPECT_NE(e["message"].get<std::string>().find("4096"), std::string::npos) << e.dump();
  EXPECT_EQ(e["param"], "input");
}

TEST_F(EmbeddingRoutesTest, OllamaEmbed) {
  auto r = post("/api/embed", R"({"model":"fake-model","input":["ab","abcd"]})");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = parse(r);
  EXPECT_EQ(j["model"], "fake-model");
  ASSERT_EQ(j["embeddings"].size(), 2u);
  expect_floats(j["embeddings"][1], fake_embedding(4));
  EXPECT_EQ(j["prompt_eval_count"], 6);
  EXPECT_GT(j["total_duration"].get<int64_t>(), 0);
  EXPECT_EQ(j["load_duration"], 0);

  // Too long: cut to the context by default, refused with truncate:false.
  const std::string long_text(5000, 'a');
  auto cut = post("/api/embed", json{{"model", "fake-model"}, {"input", long_text}}.dump());
  ASSERT_EQ(cut.status, 200) << cut.body;
  EXPECT_EQ(parse(cut)["prompt_eval_count"], 4096);
  auto refused =
      post("/api/embed",
           json{{"model", "fake-model"}, {"input", long_text}, {"truncate", false}}.dump());
  EXPECT_EQ(refused.status, 400);
  EXPECT_NE(parse(refused)["error"].get<std::string>().find("4096"), std::string::npos);

  auto load = post("/api/embed", R"({"model":"fake-model"})");
  ASSERT_EQ(load.status, 200) << load.body;
  EXPECT_EQ(parse(load)["embeddings"], json::array());

  auto unknown = post("/api/embed", R"({"model":"llama9","input":"a"})");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_TRUE(parse(unknown)["error"].is_string()) << unknown.body;
  EXPECT_EQ(post("/api/embed", R"({"input":"a"})").status, 400);
}

TEST_F(EmbeddingRoutesTest, OllamaLegacyEmbeddings) {
  auto r = post("/api/embeddings", R"({"model":"fake-model:latest","prompt":"abc"})");
  ASSERT_EQ(r.status, 200) << r.body;
  expect_floats(parse(r)["embedding"], fake_embedding(3));
  auto load = post("/api/embeddings", R"({"model":"fake-model","prompt":""})");
  ASSERT_EQ(load.status, 200);
  EXPECT_EQ(parse(load)["embedding"], json::array());
  auto refused = post("/api/embeddings",
                      json{{"model", "fake-model"}, {"prompt", std::string(5000, 'a')}}.dump());
  EXPECT_EQ(refused.status, 400);
}

}  // namespace
}  // namespace cohort::api
