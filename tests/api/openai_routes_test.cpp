// The OpenAI completions routes over a real HttpServer (all dialects registered), served
// from a fake Engine (fake_engine.h).
#include "api/api_routes.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "api/fake_engine.h"
#include "api/http_server.h"
#include "api/request_id.h"
#include "support/http_client.h"

namespace cohort::api {
namespace {

using cohort::testing::http_request;
using cohort::testing::HttpClient;
using cohort::testing::HttpReply;
using nlohmann::json;

using api_test::FakeEngine;

class OpenAiRoutesTest : public ::testing::Test {
 protected:
  void start(ServerOptions options = {}) {
    options.port = 0;
    Router router;
    add_api_routes(router, engine_);
    auto server = HttpServer::start(options, std::move(router));
    ASSERT_TRUE(server.is_ok()) << server.status().message();
    server_ = std::move(server).value();
    port_ = server_->port();
  }
  void SetUp() override { start(); }
  void TearDown() override {
    if (server_) server_->stop();
  }

  HttpReply post(const std::string& body, const testing::HeaderList& headers = {}) {
    return http_request(port_, "POST", "/v1/completions", body, headers);
  }

  FakeEngine engine_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
};

json parse(const HttpReply& r) { return json::parse(r.body, nullptr, false); }

TEST_F(OpenAiRoutesTest, HealthReadyAndLoading) {
  HttpReply ok = http_request(port_, "GET", "/health");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(parse(ok), json({{"status", "ok"}}));
  engine_.ready_ = false;
  HttpReply loading = http_request(port_, "GET", "/health", {}, {{"Origin", "http://o.test"}});
  EXPECT_EQ(loading.status, 503);
  EXPECT_EQ(parse(loading), json({{"status", "loading"}}));
  EXPECT_EQ(loading.header("access-control-allow-origin"), "http://o.test");
}

TEST_F(OpenAiRoutesTest, RootAnswersGetAndHead) {
  HttpReply get = http_request(port_, "GET", "/");
  EXPECT_EQ(get.status, 200);
  EXPECT_FALSE(get.body.empty());
  HttpReply head = http_request(port_, "HEAD", "/");
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
}

TEST_F(OpenAiRoutesTest, ModelsListsTheEngineModel) {
  HttpReply r = http_request(port_, "GET", "/v1/models");
  ASSERT_EQ(r.status, 200);
  json j = parse(r);
  EXPECT_EQ(j["object"], "list");
  ASSERT_EQ(j["data"].size(), 1u);
  EXPECT_EQ(j["data"][0]["id"], "fake-model");
  EXPECT_EQ(j["data"][0]["object"], "model");
  EXPECT_EQ(j["data"][0]["owned_by"], "cohort");
  EXPECT_TRUE(j["data"][0]["created"].is_number_integer());
}

TEST_F(OpenAiRoutesTest, CompletionHappyPath) {
  const int64_t before = unix_time_s();
  HttpReply r = post(R"({"model":"fake-model:latest","prompt":"Hello","max_tokens":32,
      "temperature":0.5,"top_p":0.9,"top_k":40,"seed":7,"stop":["\n","END"],
      "metadata":{"x":1},"store":true})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("content-type"), "application/json");
  json j = parse(r);
  EXPECT_EQ(j["id"].get<std::string>().rfind("cmpl-", 0), 0u);
  EXPECT_GT(j["id"].get<std::string>().size(), 10u);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_GE(j["created"].get<int64_t>(), before);
  EXPECT_EQ(j["model"], "fake-model:latest");
  ASSERT_EQ(j["choices"].size(), 1u);
  EXPECT_EQ(j["choices"][0]["index"], 0);
  EXPECT_EQ(j["choices"][0]["text"], "Hello");
  EXPECT_TRUE(j["choices"][0]["logprobs"].is_null());
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(j["usage"]["completion_tokens"], 5);
  EXPECT_EQ(j["usage"]["total_tokens"], 10);

  runtime::CompletionRequest seen = engine_.last();
  EXPECT_EQ(seen.prompt, "Hello");
  EXPECT_EQ(seen.max_tokens, 32);
  EXPECT_FLOAT_EQ(seen.temperature, 0.5f);
  EXPECT_FLOAT_EQ(seen.top_p, 0.9f);
  EXPECT_EQ(seen.top_k, 40);
  EXPECT_EQ(seen.seed, std::optional<uint64_t>(7));
  EXPECT_EQ(seen.stop, (std::vector<std::string>{"\n", "END"}));
}

TEST_F(OpenAiRoutesTest, DefaultsAndAlternativeShapes) {
  // No model: the engine's name; max_tokens defaults to 16; prompt as an array of one;
  // stop as one string; nulls mean absent.
  HttpReply r = post(R"({"prompt":["abcdefghijklmnopqrstuvwxyz"],"stop":"zz","max_tokens":null,
                         "temperature":null,"stream":false})");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = parse(r);
  EXPECT_EQ(j["model"], "fake-model");
  EXPECT_EQ(j["choices"][0]["text"], "abcdefghijklmnop");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["completion_tokens"], 16);
  EXPECT_EQ(engine_.last().max_tokens, 16);
  EXPECT_EQ(engine_.last().stop, std::vector<std::string>{"zz"});
}

TEST_F(OpenAiRoutesTest, InvalidUtf8FromTheEngineIsReplacedNotFatal) {
  engine_.set_output("ok \xE2\x82");  // a character cut in half
  HttpReply r = post(R"({"prompt":"x","max_tokens":100})");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(parse(r)["choices"][0]["text"], "ok \xEF\xBF\xBD");
}

TEST_F(OpenAiRoutesTest, ValidationErrorsAre400InOpenAiShape) {
  struct Case {
    const char* body;
    const char* param;  // nullptr: param is null
  };
  const Case cases[] = {
      {R"({"model":"m"})", "prompt"},
      {R"({"prompt":null})", "prompt"},
      {R"({"prompt":42})", "prompt"},
      {R"({"prompt":["a","b"]})", "prompt"},
      {R"({"prompt":[1,2,3]})", "prompt"},
      {R"({"prompt":"x","max_tokens":-1})", "max_tokens"},
      {R"({"prompt":"x","max_tokens":"16"})", "max_tokens"},
      {R"({"prompt":"x","max_tokens":1.5})", "max_tokens"},
      {R"({"prompt":"x","max_tokens":18446744073709551615})", "max_tokens"},
      {R"({"prompt":"x","temperature":"hot"})", "temperature"},
      {R"({"prompt":"x","temperature":2.5})", "temperature"},
      {R"({"prompt":"x","top_p":1.5})", "top_p"},
      {R"({"prompt":"x","seed":"s"})", "seed"},
      {R"({"prompt":"x","stop":5})", "stop"},
      {R"({"prompt":"x","stop":["a",1]})", "stop"},
      {R"({"prompt":"x","model":5})", "model"},
      {R"({"prompt":"x","stream":"yes"})", "stream"},
      {R"({"prompt":"x","n":2})", "n"},
      {R"({"prompt":"x","echo":true})", "echo"},
      {R"({"prompt":"x","logprobs":3})", "logprobs"},
      {R"({"prompt":"x","suffix":"tail"})", "suffix"},
      {R"({"prompt":"x","best_of":3})", "best_of"},
      {R"({"prompt":"x","logit_bias":{"50256":-100}})", "logit_bias"},
      {R"({"prompt":"x","max_completion_tokens":-2})", "max_completion_tokens"},
      {R"({"prompt":"x","stream_options":{"include_usage":"yes"}})", "stream_options"},
      {R"({"prompt":"x","presence_penalty":3})", "presence_penalty"},
      {R"({"prompt": "x",)", nullptr},
      {"not json", nullptr},
      {"[1,2]", nullptr},
      {"", nullptr},
  };
  for (const Case& c : cases) {
    HttpReply r = post(c.body, {{"Origin", "http://v.test"}});
    EXPECT_EQ(r.status, 400) << c.body;
    EXPECT_EQ(r.header("access-control-allow-origin"), "http://v.test") << c.body;
    json j = parse(r);
    ASSERT_TRUE(j.contains("error")) << c.body << " -> " << r.body;
    EXPECT_EQ(j["error"]["type"], "invalid_request_error") << c.body;
    EXPECT_TRUE(j["error"]["message"].is_string()) << c.body;
    EXPECT_FALSE(j["error"]["message"].get<std::string>().empty()) << c.body;
    EXPECT_TRUE(j["error"].contains("code")) << c.body;
    if (c.param == nullptr) {
      EXPECT_TRUE(j["error"]["param"].is_null()) << c.body;
    } else {
      EXPECT_EQ(j["error"]["param"], c.param) << c.body;
    }
  }
  EXPECT_EQ(engine_.calls_.load(), 0);
}

TEST_F(OpenAiRoutesTest, EngineErrorsMapToStatuses) {
  struct Case {
    Status status;
    int http;
    const char* type;
  };
  const Case cases[] = {
      {Status::invalid_argument("runtime: prompt too long"), 400, "invalid_request_error"},
      {Status::unavailable("cluster: lost node 2"), 503, "server_error"},
      {Status::internal("runtime: broke"), 500, "server_error"},
  };
  for (const Case& c : cases) {
    engine_.set_fail(c.status);
    HttpReply r = post(R"({"prompt":"x"})", {{"Origin", "http://e.test"}});
    EXPECT_EQ(r.status, c.http) << c.status.message();
    EXPECT_EQ(r.header("access-control-allow-origin"), "http://e.test");
    json j = parse(r);
    EXPECT_EQ(j["error"]["message"], c.status.message());
    EXPECT_EQ(j["error"]["type"], c.type);
  }
}

TEST_F(OpenAiRoutesTest, NotReadyCompletionsAre503) {
  engine_.ready_ = false;
  HttpReply r = post(R"({"prompt":"x"})");
  EXPECT_EQ(r.status, 503);
  EXPECT_FALSE(r.header("retry-after").empty());
  EXPECT_EQ(parse(r)["error"]["type"], "server_error");
  EXPECT_EQ(engine_.calls_.load(), 0);
}

TEST_F(OpenAiRoutesTest, CorsOnEveryKindOfResponse) {
  const testing::HeaderList origin = {{"Origin", "http://c.test"}};
  EXPECT_EQ(post(R"({"prompt":"x"})", origin).header("access-control-allow-origin"),
            "http://c.test");                                                           // 200
  EXPECT_EQ(post("{", origin).header("access-control-allow-origin"), "http://c.test");  // 400
  HttpReply nf = http_request(port_, "GET", "/v1/nothing", {}, origin);
  EXPECT_EQ(nf.status, 404);
  EXPECT_EQ(nf.header("access-control-allow-origin"), "http://c.test");
  engine_.ready_ = false;
  HttpReply busy = http_request(port_, "GET", "/health", {}, origin);
  EXPECT_EQ(busy.status, 503);
  EXPECT_EQ(busy.header("access-control-allow-origin"), "http://c.test");
  HttpReply pre = http_request(port_, "OPTIONS", "/v1/completions", {},
                               {{"Origin", "http://c.test"},
                                {"Access-Control-Request-Method", "POST"},
                                {"Access-Control-Request-Headers", "content-type,authorization"}});
  EXPECT_EQ(pre.status, 204);
  EXPECT_EQ(pre.header("access-control-allow-origin"), "http://c.test");
  EXPECT_EQ(pre.header("access-control-allow-headers"), "content-type,authorization");
}

TEST_F(OpenAiRoutesTest, ApiKeyRequiredExceptOnPublicRoutes) {
  server_->stop();
  ServerOptions options;
  options.api_key = "k-123";
  start(options);
  EXPECT_EQ(http_request(port_, "GET", "/health").status, 200);
  EXPECT_EQ(http_request(port_, "GET", "/").status, 200);
  EXPECT_EQ(http_request(port_, "HEAD", "/").status, 200);
  EXPECT_EQ(http_request(port_, "OPTIONS", "/v1/completions").status, 204);
  HttpReply denied = post(R"({"prompt":"x"})");
  EXPECT_EQ(denied.status, 401);
  EXPECT_EQ(parse(denied)["error"]["code"], "invalid_api_key");
  EXPECT_EQ(http_request(port_, "GET", "/v1/models").status, 401);
  EXPECT_EQ(post(R"({"prompt":"x"})", {{"Authorization", "Bearer k-123"}}).status, 200);
  EXPECT_EQ(post(R"({"prompt":"x"})", {{"x-api-key", "k-123"}}).status, 200);
  EXPECT_EQ(post(R"({"prompt":"x"})", {{"x-api-key", "k-124"}}).status, 401);
  EXPECT_EQ(engine_.calls_.load(), 2);
}

TEST_F(OpenAiRoutesTest, ConcurrentClients) {
  constexpr int kThreads = 8;
  constexpr int kRequests = 20;
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      HttpClient client(port_);  // one keep-alive connection per thread
      for (int i = 0; i < kRequests; ++i) {
        const std::string prompt = "t" + std::to_string(t) + "r" + std::to_string(i);
        HttpReply r = client.request("POST", "/v1/completions",
                                     json({{"prompt", prompt}, {"max_tokens", 64}}).dump());
        json j = json::parse(r.body, nullptr, false);
        if (r.status == 200 && j.is_object() && j["choices"][0]["text"] == prompt) ++good;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(good.load(), kThreads * kRequests);
  EXPECT_EQ(engine_.calls_.load(), kThreads * kRequests);
}

}  // namespace
}  // namespace cohort::api
