// The embedding endpoints' bodies: every input shape OpenAI accepts (string, strings, token
// ids, arrays of token ids), encoding_format and dimensions, Ollama's /api/embed (truncate on
// by default, no input = load only) and legacy /api/embeddings; bad bodies name their field.
#include "api/embedding_request.h"

#include <gtest/gtest.h>

#include <string>

namespace cohort::api {
namespace {

using nlohmann::json;

Result<EmbeddingParams> openai(const char* body, std::string* param) {
  return parse_openai_embedding_request(json::parse(body), param);
}

TEST(OpenAiEmbeddingRequest, EveryInputShape) {
  std::string param;
  auto one = openai(R"({"model":"m","input":"hello"})", &param);
  ASSERT_TRUE(one.is_ok()) << one.status().message();
  EXPECT_EQ(one->model, "m");
  EXPECT_FALSE(one->base64);
  ASSERT_EQ(one->request.inputs.size(), 1u);
  EXPECT_EQ(one->request.inputs[0].text, "hello");
  EXPECT_FALSE(one->request.inputs[0].is_tokens);
  EXPECT_FALSE(one->request.truncate);
  EXPECT_EQ(one->request.dimensions, 0);

  auto strings = openai(R"({"input":["a","b","c"],"encoding_format":"base64"})", &param);
  ASSERT_TRUE(strings.is_ok());
  EXPECT_TRUE(strings->base64);
  ASSERT_EQ(strings->request.inputs.size(), 3u);
  EXPECT_EQ(strings->request.inputs[2].text, "c");

  auto ids = openai(R"({"input":[1,2,3],"dimensions":2})", &param);
  ASSERT_TRUE(ids.is_ok());
  ASSERT_EQ(ids->request.inputs.size(), 1u);
  EXPECT_TRUE(ids->request.inputs[0].is_tokens);
  EXPECT_EQ(ids->request.inputs[0].tokens, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(ids->request.dimensions, 2);

  auto id_arrays = openai(R"({"input":[[5],[6,7]],"encoding_format":null,"user":"x"})", &param);
  ASSERT_TRUE(id_arrays.is_ok());
  ASSERT_EQ(id_arrays->request.inputs.size(), 2u);
  EXPECT_EQ(id_arrays->request.inputs[1].tokens, (std::vector<int32_t>{6, 7}));
}

TEST(OpenAiEmbeddingRequest, BadBodiesNameTheirField) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({})", "input"},
      {R"({"input":""})", "input"},
      {R"({"input":[]})", "input"},
      {R"({"input":["a",""]})", "input"},
      {R"({"input":[[]]})", "input"},
      {R"({"input":[1,"a"]})", "input"},
      {R"({"input":["a",1]})", "input"},
      {R"({"input":[-1]})", "input"},
      {R"({"input":[1.5]})", "input"},
      {R"({"input":[[1],"a"]})", "input"},
      {R"({"input":7})", "input"},
      {R"({"input":"a","encoding_format":"int8"})", "encoding_format"},
      {R"({"input":"a","dimensions":0})", "dimensions"},
      {R"({"input":"a","dimensions":"8"})", "dimensions"},
      {R"({"input":"a","model":3})", "model"},
  };
  for (const auto& [body, field] : cases) {
    std::string param;
    auto r = openai(body, &param);
    ASSERT_FALSE(r.is_ok()) << body;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << body;
    EXPECT_EQ(param, field) << body << ": " << r.status().message();
  }
  json many = {{"input", json::array()}};
  for (int i = 0; i < 2049; ++i) many["input"].push_back("x");
  std::string param;
  EXPECT_FALSE(parse_openai_embedding_request(many, &param).is_ok());
}

TEST(OllamaEmbeddingRequest, EmbedAndLegacy) {
  std::string param;
  auto one = parse_ollama_embed_request(json::parse(R"({"model":"m","input":"hi"})"), &param);
  ASSERT_TRUE(one.is_ok());
  EXPECT_TRUE(one->request.truncate);  // Ollama's default
  EXPECT_FALSE(one->load_only);
  ASSERT_EQ(one->request.inputs.size(), 1u);

  auto many = parse_ollama_embed_request(
      json::parse(R"({"model":"m","input":["a","b"],"truncate":false,"dimensions":3,
                      "options":{"num_ctx":8},"keep_alive":"5m"})"),
      &param);
  ASSERT_TRUE(many.is_ok());
  EXPECT_FALSE(many->request.truncate);
  EXPECT_EQ(many->request.dimensions, 3);
  EXPECT_EQ(many->request.inputs.size(), 2u);

  for (const char* load : {R"({"model":"m"})", R"({"model":"m","input":""})"}) {
    auto r = parse_ollama_embed_request(json::parse(load), &param);
    ASSERT_TRUE(r.is_ok()) << load;
    EXPECT_TRUE(r->load_only) << load;
  }
  for (const char* bad : {R"({"input":"a"})", R"({"model":"m","input":5})",
                          R"({"model":"m","input":["a",""]})", R"({"model":"m","truncate":1})"}) {
    EXPECT_FALSE(parse_ollama_embed_request(json::parse(bad), &param).is_ok()) << bad;
  }

  auto legacy =
      parse_ollama_embeddings_request(json::parse(R"({"model":"m","prompt":"p"})"), &param);
  ASSERT_TRUE(legacy.is_ok());
  ASSERT_EQ(legacy->request.inputs.size(), 1u);
  EXPECT_EQ(legacy->request.inputs[0].text, "p");
  EXPECT_FALSE(legacy->request.truncate);
  auto legacy_load = parse_ollama_embeddings_request(json::parse(R"({"model":"m"})"), &param);
  ASSERT_TRUE(legacy_load.is_ok());
  EXPECT_TRUE(legacy_load->load_only);
  EXPECT_FALSE(parse_ollama_embeddings_request(json::parse(R"({"prompt":"p"})"), &param).is_ok());
}

}  // namespace
}  // namespace cohort::api
