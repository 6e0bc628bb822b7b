// A worker made slow (`cohort worker --inject-delay-ms`, a sleep in every step it runs) in a
// pipeline, and in a tensor-parallel group, of the head and two workers on 127.0.0.1: requests keep
// succeeding with the same greedy text while the head notices the slow node from the step times in
// its heartbeats, logs a slow_node event, lets the running request finish and places the model
// again without it; /v1/cluster/status then no longer lists it.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/http_client.h"
#include "support/local_cluster.h"
#include "support/process.h"
#include "support/shared_data.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace cohort {
namespace {

using testing::kCohortBinary;
using testing::kStoriesGguf;

double slow_seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

class ClusterSlowNode : public ::testing::TestWithParam<const char*> {};

TEST_P(ClusterSlowNode, ASlowWorkerIsNoticedAndPlacedAround) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  const std::string mode = GetParam();
  testing::TempDir dir;
  const std::string key = dir.file("k");
  ASSERT_EQ(testing::run_command(kCohortBinary + " key new > " + key).exit_code, 0);
  testing::LocalWorkers workers = testing::start_workers(kCohortBinary, 2, key, dir, "s",
                                                         [](const std::string& name) {
                                                           return name == "s1" ? std::vector<std::string>{"--inject-delay-ms", "40"}
                            : std::vector<std::string>{};
                                                         });
  ASSERT_EQ(workers.procs.size(), 2u);
  const int http = testing::free_port();
  testing::ChildProcess head(
      {kCohortBinary, "serve", "-m", kStoriesGguf, "--workers", workers.list, "--parallel", mode,
       "--key-file", key, "-t", "1", "-c", "256", "--port", std::to_string(http)},
      dir.file("head.log"));
  ASSERT_TRUE(testing::wait_for_port(http, 20000)) << head.log();
  const auto port = static_cast<uint16_t>(http);
  auto status = [&] { return testing::http_request(port, "GET", "/v1/cluster/status").body; };
  ASSERT_NE(status().find("s1"), std::string::npos) << status();

  const std::string body = R"({"prompt":"Once upon a time","max_tokens":24,"temperature":0})";
  const testing::HttpReply first = testing::http_request(port, "POST", "/v1/completions", body);
  ASSERT_EQ(first.status, 200) << first.body << head.log();
  const std::string text = testing::completion_text(first.body);
  ASSERT_GT(text.size(), 10u) << first.body;

  // Every request succeeds with the same text while the head decides and moves.
  const auto t0 = std::chrono::steady_clock::now();
  int requests = 1;
  bool moved = false;
  while (!moved && slow_seconds_since(t0) < 15.0) {
    const testing::HttpReply r = testing::http_request(port, "POST", "/v1/completions", body);
    ++requests;
    ASSERT_EQ(r.status, 200) << r.body << head.log();
    EXPECT_EQ(testing::completion_text(r.body), text) << "request " << requests;
    moved = status().find("s1") == std::string::npos;
  }
  std::printf(
      "[ slow ] %s: the slow node was placed around %.2f s and %d requests after the "
      "first\n",
      mode.c_str(), slow_seconds_since(t0), requests);
  ASSERT_TRUE(moved) << status() << head.log();
  const std::string placed = status();
  EXPECT_NE(placed.find("s0"), std::string::npos) << placed;

  const testing::HttpReply after = testing::http_request(port, "POST", "/v1/completions", body);
  ASSERT_EQ(after.status, 200) << after.body;
  EXPECT_EQ(testing::completion_text(after.body), text);

  const nlohmann::json cluster = nlohmann::json::parse(
      testing::http_request(port, "GET", "/v1/cluster", {}).body, nullptr, false);
  ASSERT_TRUE(cluster.is_object());
  std::string slow_event;
  for (const auto& w : cluster["warnings"]) {
    if (w["kind"] == "slow_node") slow_event = w["message"].get<std::string>();
  }
  EXPECT_NE(slow_event.find("s1 is slow"), std::string::npos) << cluster.dump();
  std::printf("[ slow ] event: %s\n", slow_event.c_str());
  EXPECT_EQ(cluster["cluster"]["nodes"].size(), 2u) << cluster.dump();
  head.kill(SIGTERM);
}

INSTANTIATE_TEST_SUITE_P(Modes, ClusterSlowNode, ::testing::Values("pipeline", "tensor"));

}  // namespace
}  // namespace cohort
