// A worker killed (kill -9) in the middle of a request, in tensor and in pipeline mode: the
// request ends with an error within 2 s (never a hang), and the next request succeeds
// on the model placed again on the nodes left.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/fault_fixture.h"
#include "support/http_client.h"
#include "support/local_cluster.h"
#include "support/process.h"
#include "support/shared_data.h"
#include "support/temp_dir.h"

namespace cohort {
namespace {

using testing::ChildProcess;

using testing::kCohortBinary;

class ClusterFaults : public ::testing::TestWithParam<const char*> {};

TEST_P(ClusterFaults, WorkerKilledMidRequestThenPlacedAgain) {
  const std::string mode = GetParam();
  testing::TempDir dir;
  const testing::FaultFiles files = testing::make_key_and_slow_model(kCohortBinary, dir);
  ASSERT_EQ(files.error, "");
  const std::string &key = files.key, &model = files.model;
  testing::LocalWorkers workers = testing::start_workers(kCohortBinary, 2, key, dir, "f");
  ASSERT_EQ(workers.procs.size(), 2u);
  const std::string& list = workers.list;
  const int http = testing::free_port();
  ChildProcess head({kCohortBinary, "serve", "-m", model, "--workers", list, "--parallel", mode,
                     "--key-file", key, "-t", "1", "-c", "2048", "--port", std::to_string(http)},
                    dir.file("head.log"));
  ASSERT_TRUE(testing::wait_for_port(http, 20000)) << head.log();

  testing::HttpReply first;
  double first_s = 0;
  std::thread client([&] {
    const auto t0 = std::chrono::steady_clock::now();
    first = testing::http_request(static_cast<uint16_t>(http), "POST", "/v1/completions",
                                  R"({"prompt":"a","max_tokens":1500,"temperature":0})");
    first_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const auto killed = std::chrono::steady_clock::now();
  workers.procs[1]->kill(SIGKILL);
  client.join();
  const double after_kill =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  std::printf("[ fault ] %s: the request in flight ended %.2f s after the kill (HTTP %d)\n",
              mode.c_str(), after_kill, first.status);
  EXPECT_GT(first_s, 1.4) << "the request finished before the kill; make it longer";
  EXPECT_GE(first.status, 500) << first.body;
  EXPECT_LT(after_kill, 2.0);  // the issue's bound: a lost node is noticed within 2 s

  // The next request runs on a new placement over the head and the worker left.
  testing::HttpReply next;
  const auto t1 = std::chrono::steady_clock::now();
  for (int attempt = 0; attempt < 10; ++attempt) {
    next = testing::http_request(static_cast<uint16_t>(http), "POST", "/v1/completions",
                                 R"({"prompt":"a","max_tokens":8,"temperature":0})");
    if (next.status == 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  const double replaced_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  std::printf("[ fault ] %s: a new request succeeded %.2f s later\n", mode.c_str(), replaced_s);
  EXPECT_EQ(next.status, 200) << next.body << head.log();
  EXPECT_LT(replaced_s, 30.0);
  EXPECT_NE(head.log().find("placed again"), std::string::npos) << head.log();
  auto status = testing::http_request(static_cast<uint16_t>(http), "GET", "/v1/cluster/status");
  EXPECT_EQ(status.body.find("f1"), std::string::npos) << "the dead worker is still placed\n"
                                                       << status.body;
  EXPECT_NE(status.body.find("f0"), std::string::npos) << status.body;
  head.kill(SIGTERM);
}

INSTANTIATE_TEST_SUITE_P(Modes, ClusterFaults, ::testing::Values("tensor", "pipeline"));

}  // namespace
}  // namespace cohort
