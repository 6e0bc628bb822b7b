// A real HttpServer on a free port with every dialect's routes (api_routes.h) over a
// FakeEngine, for the route tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "api/api_routes.h"
#include "api/fake_engine.h"
#include "api/http_server.h"
#include "support/http_client.h"

namespace cohort::api_test {

using api::add_api_routes;
using api::HttpServer;
using api::Router;
using api::ServerOptions;

class ApiFixture : public ::testing::Test {
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

  cohort::testing::HttpReply post(const std::string& path, const std::string& body,
                                  const cohort::testing::HeaderList& headers = {}) {
    return cohort::testing::http_request(port_, "POST", path, body, headers);
  }
  cohort::testing::HttpReply get(const std::string& path,
                                 const cohort::testing::HeaderList& headers = {}) {
    return cohort::testing::http_request(port_, "GET", path, {}, headers);
  }
  static nlohmann::json parse(const cohort::testing::HttpReply& r) {
    return nlohmann::json::parse(r.body, nullptr, false);
  }

  FakeEngine engine_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
};

}  // namespace cohort::api_test
