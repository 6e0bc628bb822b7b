// HttpServer mechanics with plain handlers: keep-alive, routing, CORS, limits, malformed
// input, streaming, API keys, timeouts and stop().
#include "api/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "support/http_client.h"

namespace cohort::api {
namespace {

using cohort::testing::http_request;
using cohort::testing::HttpClient;
using cohort::testing::HttpReply;
using Clock = std::chrono::steady_clock;

struct StreamProbe {
  std::atomic<bool> saw_failed_write{false};
  std::atomic<bool> returned{false};
};

Router test_router(StreamProbe* probe) {
  Router router;
  router.add("GET", "/hello", [](const HttpRequest&) { return text_response(200, "hello"); });
  router.add("POST", "/echo", [](const HttpRequest& req) {
    HttpResponse res = text_response(200, req.body);
    res.set_header("X-Query", req.query);
    return res;
  });
  router.add(
      "GET", "/public", [](const HttpRequest&) { return text_response(200, "public"); },
      RouteAccess::kPublic);
  router.add("GET", "/throws",
             [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("boom"); });
  router.add("GET", "/stream", [](const HttpRequest&) {
    HttpResponse res;
    res.content_type = "text/event-stream";
    res.stream = [](StreamWriter& w) {
      for (const char* piece : {"a", "", "bb", "ccc"}) {
        if (!w.write(piece)) return;
      }
    };
    return res;
  });
  router.add("GET", "/stream_forever", [probe](const HttpRequest&) {
    HttpResponse res;
    res.content_type = "application/x-ndjson";
    res.stream = [probe](StreamWriter& w) {
      const std::string line(1024, 'x');
      for (int i = 0; i < 100000; ++i) {
        if (!w.write(line)) {
          probe->saw_failed_write = true;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      probe->returned = true;
    };
    return res;
  });
  return router;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void start(ServerOptions options = {}) {
    options.port = 0;
    auto server = HttpServer::start(options, test_router(&probe_));
    ASSERT_TRUE(server.is_ok()) << server.status().message();
    server_ = std::move(server).value();
    port_ = server_->port();
    ASSERT_NE(port_, 0);
  }
  void TearDown() override {
    if (server_) server_->stop();
  }

  StreamProbe probe_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
};

TEST_F(HttpServerTest, KeepAliveServesTwoRequestsOnOneConnection) {
  start();
  HttpClient client(port_);
  ASSERT_TRUE(client.connected());
  HttpReply a = client.request("GET", "/hello");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "hello");
  EXPECT_NE(a.header("connection"), "close");
  HttpReply b = client.request("POST", "/echo?x=1", "second");
  EXPECT_EQ(b.status, 200);
  EXPECT_EQ(b.body, "second");
  EXPECT_EQ(b.header("x-query"), "x=1");  // query reaches the handler, routing ignores it
}

TEST_F(HttpServerTest, ConnectionCloseIsHonoured) {
  start();
  HttpClient client(port_);
  HttpReply a = client.request("GET", "/hello", {}, {{"Connection", "close"}});
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.header("connection"), "close");
  EXPECT_TRUE(client.wait_closed());
}

TEST_F(HttpServerTest, UnknownPathIs404JsonWithCors) {
  start();
  HttpReply r = http_request(port_, "GET", "/nope?x=1");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_NE(r.body.find("\"error\""), std::string::npos);
  EXPECT_NE(r.body.find("invalid_request_error"), std::string::npos);
  EXPECT_EQ(r.header("access-control-allow-origin"), "*");
}

TEST_F(HttpServerTest, WrongMethodIs405WithAllow) {
  start();
  HttpReply r = http_request(port_, "POST", "/hello", "{}");
  EXPECT_EQ(r.status, 405);
  EXPECT_NE(r.header("allow").find("GET"), std::string::npos);
  EXPECT_EQ(r.header("access-control-allow-origin"), "*");
}

TEST_F(HttpServerTest, HeadSendsHeadersWithoutBody) {
  start();
  HttpClient client(port_);
  HttpReply h = client.request("HEAD", "/hello");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.header("content-length"), "5");
  EXPECT_TRUE(h.body.empty());
  HttpReply g = client.request("GET", "/hello");  // no stray body bytes before this reply
  EXPECT_EQ(g.status, 200);
  EXPECT_EQ(g.body, "hello");
}

TEST_F(HttpServerTest, PreflightAnswers204WithCorsHeaders) {
  start();
  HttpReply r = http_request(port_, "OPTIONS", "/v1/anything", {},
                             {{"Origin", "http://localhost:3000"},
                              {"Access-Control-Request-Method", "POST"},
                              {"Access-Control-Request-Headers", "authorization, x-stainless-os"}});
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(r.header("access-control-allow-origin"), "http://localhost:3000");
  EXPECT_EQ(r.header("access-control-allow-methods"), "GET, POST, DELETE, OPTIONS");
  EXPECT_EQ(r.header("access-control-allow-headers"), "authorization, x-stainless-os");

  HttpReply plain = http_request(port_, "OPTIONS", "/hello");
  EXPECT_EQ(plain.status, 204);
  EXPECT_EQ(plain.header("access-control-allow-origin"), "*");
  EXPECT_NE(plain.header("access-control-allow-headers").find("Authorization"), std::string::npos);
  EXPECT_NE(plain.header("access-control-allow-headers").find("x-api-key"), std::string::npos);
}

TEST_F(HttpServerTest, CorsOriginEchoedOnSuccessAndErrors) {
  start();
  const cohort::testing::HeaderList origin = {{"Origin", "http://example.test"}};
  for (const char* path : {"/hello", "/nope", "/throws"}) {
    HttpReply r = http_request(port_, "GET", path, {}, origin);
    EXPECT_NE(r.status, 0) << path;
    EXPECT_EQ(r.header("access-control-allow-origin"), "http://example.test") << path;
  }
}

TEST_F(HttpServerTest, ThrowingHandlerIs500AndServerKeepsServing) {
  start();
  HttpReply r = http_request(port_, "GET", "/throws");
  EXPECT_EQ(r.status, 500);
  EXPECT_NE(r.body.find("server_error"), std::string::npos);
  EXPECT_EQ(http_request(port_, "GET", "/hello").status, 200);
}

TEST_F(HttpServerTest, OversizedBodyIs413) {
  ServerOptions options;
  options.max_body_bytes = 1024;
  start(options);
  HttpClient client(port_);
  client.send_request("POST", "/echo", std::string(4096, 'x'), {{"Origin", "http://a.test"}});
  HttpReply r = client.read_reply();
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.header("access-control-allow-origin"), "http://a.test");
  EXPECT_NE(r.body.find("\"error\""), std::string::npos);
  EXPECT_TRUE(client.wait_closed());
  // At the limit is fine.
  EXPECT_EQ(http_request(port_, "POST", "/echo", std::string(1024, 'y')).status, 200);
}

TEST_F(HttpServerTest, DefaultLimitRefusesNineMebibytes) {
  start();
  HttpClient client(port_);
  client.send_request("POST", "/echo", std::string(size_t{9} << 20, 'x'));
  EXPECT_EQ(client.read_reply().status, 413);
}

TEST_F(HttpServerTest, ExpectContinueGetsInterimReply) {
  start();
  HttpClient client(port_);
  ASSERT_TRUE(client.send_raw(
      "POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"));
  EXPECT_EQ(client.read_reply().status, 100);
  ASSERT_TRUE(client.send_raw("hello"));
  HttpReply r = client.read_reply();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hello");
}

TEST_F(HttpServerTest, HugeHeaderBlockIs431) {
  start();
  HttpClient client(port_);
  client.send_request("GET", "/hello", {}, {{"X-Big", std::string(70 * 1024, 'h')}});
  EXPECT_EQ(client.read_reply().status, 431);
}

TEST_F(HttpServerTest, MalformedRequestLineIs400AndServerKeepsServing) {
  start();
  HttpClient client(port_);
  ASSERT_TRUE(client.send_raw("THIS IS NOT HTTP\r\n\r\n"));
  HttpReply r = client.read_reply();
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.header("access-control-allow-origin"), "*");
  EXPECT_TRUE(client.wait_closed());

  HttpClient bad_header(port_);
  ASSERT_TRUE(bad_header.send_raw("GET /hello HTTP/1.1\r\nno colon here\r\n\r\n"));
  EXPECT_EQ(bad_header.read_reply().status, 400);

  EXPECT_EQ(http_request(port_, "GET", "/hello").status, 200);
}

TEST_F(HttpServerTest, StreamedBodyIsChunkedAndConnectionStaysUsable) {
  start();
  HttpClient client(port_);
  HttpReply r = client.request("GET", "/stream", {}, {{"Origin", "http://s.test"}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("transfer-encoding"), "chunked");
  EXPECT_EQ(r.header("content-type"), "text/event-stream");
  EXPECT_EQ(r.header("access-control-allow-origin"), "http://s.test");
  EXPECT_EQ(r.body, "abbccc");
  EXPECT_EQ(r.chunks.size(), 3u);  // the empty write was skipped
  EXPECT_EQ(client.request("GET", "/hello").body, "hello");
}

TEST_F(HttpServerTest, StreamProducerSeesClientDisconnect) {
  start();
  {
    HttpClient client(port_);
    ASSERT_TRUE(client.send_request("GET", "/stream_forever"));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }  // closes mid-stream
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!probe_.returned && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(probe_.returned);
  EXPECT_TRUE(probe_.saw_failed_write);
}

TEST_F(HttpServerTest, ApiKeyRequiredWhenConfigured) {
  ServerOptions options;
  options.api_key = "sekrit";
  start(options);
  HttpReply none = http_request(port_, "GET", "/hello");
  EXPECT_EQ(none.status, 401);
  EXPECT_NE(none.body.find("invalid_api_key"), std::string::npos);
  EXPECT_EQ(none.header("access-control-allow-origin"), "*");
  EXPECT_EQ(http_request(port_, "GET", "/hello", {}, {{"Authorization", "Bearer wrong"}}).status,
            401);
  EXPECT_EQ(http_request(port_, "GET", "/hello", {}, {{"Authorization", "Bearer sekrit"}}).status,
            200);
  EXPECT_EQ(http_request(port_, "GET", "/hello", {}, {{"authorization", "bearer sekrit"}}).status,
            200);
  EXPECT_EQ(http_request(port_, "GET", "/hello", {}, {{"x-api-key", "sekrit"}}).status, 200);
  EXPECT_EQ(http_request(port_, "GET", "/public").status, 200);
  EXPECT_EQ(http_request(port_, "OPTIONS", "/hello").status, 204);
}

TEST_F(HttpServerTest, IdleConnectionTimesOut) {
  ServerOptions options;
  options.read_timeout_ms = 200;
  start(options);
  HttpClient client(port_);
  ASSERT_TRUE(client.send_raw("GET /hello HTTP/1.1\r\n"));  // and never finish
  const auto t0 = Clock::now();
  EXPECT_TRUE(client.wait_closed());
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(3));
}

TEST_F(HttpServerTest, StopWithClientsConnectedReturnsPromptly) {
  start();
  HttpClient idle(port_);
  ASSERT_EQ(idle.request("GET", "/hello").status, 200);  // now idle in keep-alive
  HttpClient partial(port_);
  ASSERT_TRUE(partial.send_raw("POST /echo HTTP/1.1\r\nContent-Length: 100\r\n\r\nabc"));
  HttpClient streaming(port_);
  ASSERT_TRUE(streaming.send_request("GET", "/stream_forever"));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));

  const auto t0 = Clock::now();
  server_->stop();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2));
  EXPECT_TRUE(probe_.returned);
  EXPECT_TRUE(idle.wait_closed());
  EXPECT_TRUE(partial.wait_closed());
  server_->stop();  // idempotent
}

TEST(HttpServerStartTest, BusyPortAndBadHostAreErrors) {
  ServerOptions options;
  options.port = 0;
  auto first = HttpServer::start(options, Router());
  ASSERT_TRUE(first.is_ok());
  options.port = first.value()->port();
  auto second = HttpServer::start(options, Router());
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().code(), StatusCode::kIoError);

  options.port = 0;
  options.host = "not an address";
  auto bad = HttpServer::start(options, Router());
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cohort::api
