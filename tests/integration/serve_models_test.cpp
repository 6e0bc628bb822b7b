// `cohort serve --models-dir DIR --max-loaded 1` with two models (stories260K, linked in,
// and a synthetic model made here): requests alternate between them and both answer, each
// loading its model in place of the other; /v1/models and /api/ps follow; explicit
// load/unload (cohort's POST /v1/models/{id}/load|unload, Ollama's empty /api/generate and
// keep_alive 0); unknown and path-like model names are refused.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "support/http_client.h"
#include "support/process.h"
#include "support/shared_data.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "support/two_models_dir.h"

namespace cohort {
namespace {

using nlohmann::json;
using testing::ChildProcess;
using testing::run_command;

using testing::kCohortBinary;

class ServeModels : public ::testing::Test {
 protected:
  void SetUp() override {
    COHORT_SKIP_WITHOUT_SHARED_DATA();
    models_ = dir_.file("models");
    ASSERT_TRUE(testing::make_two_models_dir(kCohortBinary, models_));
    port_ = testing::free_port();
    head_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{kCohortBinary, "serve", "--models-dir", models_, "--max-loaded",
                                 "1", "-t", "1", "-c", "256", "--port", std::to_string(port_)},
        dir_.file("head.log"));
    ASSERT_TRUE(testing::wait_for_port(port_, 20000)) << head_->log();
  }

  testing::HttpReply post(const std::string& path, const std::string& body) {
    return testing::http_request(static_cast<uint16_t>(port_), "POST", path, body);
  }
  json get_json(const std::string& path) {
    testing::HttpReply r = testing::http_request(static_cast<uint16_t>(port_), "GET", path);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    return json::parse(r.body, nullptr, false);
  }
  // The names /api/ps lists as loaded.
  std::vector<std::string> loaded() {
    std::vector<std::string> names;
    json ps = get_json("/api/ps");
    for (const json& m : ps["models"]) names.push_back(m["name"].get<std::string>());
    return names;
  }
  std::string complete(const std::string& model) {
    testing::HttpReply r =
        post("/v1/completions", R"({"model":")" + model + R"(","prompt":"Once upon a time",)" +
                                    R"("max_tokens":8,"temperature":0})");
    EXPECT_EQ(r.status, 200) << r.body << head_->log();
    return testing::completion_text(r.body);
  }
  int chat_status(const std::string& model) {
    testing::HttpReply r =
        post("/api/chat", R"({"model":")" + model + R"(","stream":false,"messages":)" +
                              R"([{"role":"user","content":"hi"}],)" +
                              R"("options":{"num_predict":4}})");
    EXPECT_NE(r.body.find("\"done\":true"), std::string::npos) << r.body;
    return r.status;
  }

  testing::TempDir dir_;
  std::string models_;
  int port_ = 0;
  std::unique_ptr<ChildProcess> head_;
};

TEST_F(ServeModels, RequestsAlternateBetweenTwoModelsWithOneLoadedAtATime) {
  json list = get_json("/v1/models");
  ASSERT_EQ(list["data"].size(), 2u) << list.dump();
  EXPECT_EQ(list["data"][0]["id"], "stories260K.gguf");
  EXPECT_EQ(list["data"][1]["id"], "tiny.gguf");
  EXPECT_EQ(list["data"][0]["loaded"], false);
  EXPECT_TRUE(loaded().empty()) << "nothing loads before it is asked for";
  EXPECT_EQ(get_json("/api/tags")["models"].size(), 2u);

  const std::string first = complete("stories260K");
  EXPECT_EQ(loaded(), std::vector<std::string>{"stories260K.gguf"});
  EXPECT_EQ(chat_status("tiny"), 200);
  EXPECT_EQ(loaded(), std::vector<std::string>{"tiny.gguf"});
  EXPECT_EQ(complete("stories260K.gguf"), first) << "greedy text survives an unload and reload";
  EXPECT_EQ(loaded(), std::vector<std::string>{"stories260K.gguf"});
  EXPECT_EQ(chat_status("tiny.gguf:latest"), 200);
  list = get_json("/v1/models");
  EXPECT_EQ(list["data"][0]["loaded"], false);
  EXPECT_EQ(list["data"][1]["loaded"], true);
  json ps = get_json("/api/ps");
  ASSERT_EQ(ps["models"].size(), 1u);
  EXPECT_GT(ps["models"][0]["size"].get<int64_t>(), 0);
  EXPECT_TRUE(ps["models"][0]["expires_at"].is_string());
}

TEST_F(ServeModels, ExplicitLoadAndUnload) {
  testing::HttpReply r = post("/v1/models/tiny.gguf/load", "");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body, nullptr, false)["loaded"], true) << r.body;
  EXPECT_EQ(loaded(), std::vector<std::string>{"tiny.gguf"});
  r = post("/v1/models/tiny/unload", "");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body, nullptr, false)["loaded"], false) << r.body;
  EXPECT_TRUE(loaded().empty());

  // Ollama: no prompt loads (with keep_alive setting the expiry), keep_alive 0 unloads.
  r = post("/api/generate", R"({"model":"stories260K","keep_alive":"10m"})");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("\"done_reason\":\"load\""), std::string::npos) << r.body;
  json ps = get_json("/api/ps");
  ASSERT_EQ(ps["models"].size(), 1u) << ps.dump();
  EXPECT_NE(ps["models"][0]["expires_at"].get<std::string>().rfind("2318", 0), 0u)
      << "a 10 minute keep-alive, not forever";
  r = post("/api/generate", R"({"model":"stories260K","keep_alive":0})");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("\"done_reason\":\"unload\""), std::string::npos) << r.body;
  EXPECT_TRUE(loaded().empty());
}

TEST_F(ServeModels, UnknownAndPathLikeNamesAreRefused) {
  testing::HttpReply r = post("/v1/completions", R"({"model":"nope","prompt":"a"})");
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_NE(r.body.find("model_not_found"), std::string::npos) << r.body;
  for (const char* name : {"../models/tiny.gguf", "../../../etc/passwd", "/etc/passwd", ".."}) {
    r = post("/v1/completions", std::string(R"({"model":")") + name + R"(","prompt":"a"})");
    EXPECT_EQ(r.status, 400) << name << ": " << r.body;
    r = post("/api/chat", std::string(R"({"model":")") + name +
                              R"(","messages":[{"role":"user","content":"a"}]})");
    EXPECT_EQ(r.status, 400) << name << ": " << r.body;
    r = post("/v1/messages", std::string(R"({"model":")") + name +
                                 R"(","max_tokens":4,"messages":[{"role":"user","content":"a"}]})");
    EXPECT_EQ(r.status, 400) << name << ": " << r.body;
  }
  r = post("/v1/models/..%2Ftiny.gguf/load", "");
  EXPECT_EQ(r.status, 404) << r.body;  // not a model offered (the path is not decoded)
  EXPECT_TRUE(loaded().empty());
}

}  // namespace
}  // namespace cohort
