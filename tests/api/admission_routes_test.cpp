// Admission limits through HTTP: with --max-concurrent 1 and no queue, a request to a model
// that is running one already gets 503 with Retry-After in its dialect's error shape (streamed
// or not, before any stream starts), and goes through once the model is free. Unknown and
// path-like model names get 404 and 400 in each dialect.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "api/api_routes.h"
#include "api/fake_engine.h"
#include "api/http_server.h"
#include "runtime/model_registry.h"
#include "support/http_client.h"

namespace cohort::api_test {
namespace {

using nlohmann::json;

class Admission : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime::ModelRegistryOptions o;
    o.max_active = 1;
    o.max_waiting = 0;
    models_ = std::make_shared<runtime::ModelRegistry>(o, runtime::ModelLoader{});
    ASSERT_TRUE(
        models_->add_resident(std::shared_ptr<runtime::Engine>(&engine_, [](auto*) {})).is_ok());
    api::Router router;
    api::add_api_routes(router, models_);
    api::ServerOptions so;
    so.port = 0;
    auto server = api::HttpServer::start(so, std::move(router));
    ASSERT_TRUE(server.is_ok()) << server.status().message();
    server_ = std::move(server).value();
  }
  void TearDown() override {
    if (server_) server_->stop();
  }
  cohort::testing::HttpReply post(const std::string& path, const std::string& body) {
    return cohort::testing::http_request(server_->port(), "POST", path, body);
  }

  FakeEngine engine_;
  std::shared_ptr<runtime::ModelRegistry> models_;
  std::unique_ptr<api::HttpServer> server_;
};

const char* kOpenAi = R"({"model":"fake-model","messages":[{"role":"user","content":"hi"}]})";
const char* kOpenAiStream =
    R"({"model":"fake-model","stream":true,"messages":[{"role":"user","content":"hi"}]})";
const char* kAnthropic =
    R"({"model":"fake-model","max_tokens":8,"messages":[{"role":"user","content":"hi"}]})";
const char* kOllama = R"({"model":"fake-model","messages":[{"role":"user","content":"hi"}]})";

TEST_F(Admission, ABusyModelAnswers503WithRetryAfterInEachDialect) {
  Result<runtime::ModelLease> running = models_->acquire("fake-model");  // a request running
  ASSERT_TRUE(running.is_ok());

  for (const char* body : {kOpenAi, kOpenAiStream}) {
    cohort::testing::HttpReply r = post("/v1/chat/completions", body);
    EXPECT_EQ(r.status, 503) << r.body;
    EXPECT_FALSE(r.header("retry-after").empty());
    json j = json::parse(r.body, nullptr, false);
    EXPECT_TRUE(j["error"]["message"].is_string()) << r.body;
    EXPECT_NE(j["error"]["message"].get<std::string>().find("busy"), std::string::npos);
  }
  cohort::testing::HttpReply r = post("/v1/messages", kAnthropic);
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_FALSE(r.header("retry-after").empty());
  json j = json::parse(r.body, nullptr, false);
  EXPECT_EQ(j["type"], "error") << r.body;
  EXPECT_EQ(j["error"]["type"], "overloaded_error") << r.body;

  r = post("/api/chat", kOllama);
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_FALSE(r.header("retry-after").empty());
  EXPECT_TRUE(json::parse(r.body, nullptr, false)["error"].is_string()) << r.body;
  EXPECT_EQ(engine_.calls_.load(), 0) << "refused before reaching the engine";

  running = Status::unavailable("finished");
  EXPECT_EQ(post("/v1/chat/completions", kOpenAi).status, 200);
  EXPECT_EQ(post("/v1/messages", kAnthropic).status, 200);
  EXPECT_EQ(post("/api/chat", R"({"model":"fake-model","stream":false,"messages":[]})").status,
            200);
  EXPECT_EQ(models_->find("fake-model")->active, 0) << "every lease released";
}

TEST_F(Admission, UnknownNamesAre404AndPathLikeNames400InEachDialect) {
  const auto body = [](const std::string& path, const std::string& model) {
    if (path == "/v1/messages") {
      return R"({"model":")" + model +
             R"(","max_tokens":8,"messages":[{"role":"user","content":"hi"}]})";
    }
    return R"({"model":")" + model + R"(","messages":[{"role":"user","content":"hi"}]})";
  };
  for (const std::string path : {"/v1/chat/completions", "/v1/messages", "/api/chat"}) {
    EXPECT_EQ(post(path, body(path, "other-model")).status, 404) << path;
    for (const std::string name : {"../fake-model", "/etc/passwd", "..", "a/../../b"}) {
      cohort::testing::HttpReply r = post(path, body(path, name));
      EXPECT_EQ(r.status, 400) << path << " " << name << ": " << r.body;
      EXPECT_NE(r.body.find("not a plain name"), std::string::npos) << r.body;
    }
  }
  EXPECT_EQ(engine_.calls_.load(), 0);
}

}  // namespace
}  // namespace cohort::api_test
