// SIGTERM to `cohort serve` on a cluster: it stops accepting, lets the request in flight
// finish, tells its worker the session is over, and exits; the worker stays up for the
// next head.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

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

TEST(ServeShutdown, SigtermFinishesTheRequestInFlightAndReleasesTheWorker) {
  testing::TempDir dir;
  const testing::FaultFiles files = testing::make_key_and_slow_model(kCohortBinary, dir);
  ASSERT_EQ(files.error, "");
  const std::string &key = files.key, &model = files.model;
  testing::LocalWorkers workers = testing::start_workers(kCohortBinary, 1, key, dir, "g");
  ASSERT_EQ(workers.procs.size(), 1u);
  const int http = testing::free_port();
  ChildProcess head(
      {kCohortBinary, "serve", "-m", model, "--workers", workers.list, "--parallel", "tensor",
       "--key-file", key, "-t", "1", "-c", "1024", "--port", std::to_string(http)},
      dir.file("head.log"));
  ASSERT_TRUE(testing::wait_for_port(http, 20000)) << head.log();

  testing::HttpReply reply;
  std::thread client([&] {
    // A non-streamed answer arrives whole at the end: on a loaded machine the 200 tokens
    // can take longer than the default 5 s read timeout, which is not what is tested here.
    testing::HttpClient c(static_cast<uint16_t>(http), 60000);
    reply =
        c.request("POST", "/v1/completions", R"({"prompt":"a","max_tokens":200,"temperature":0})");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  const auto t0 = std::chrono::steady_clock::now();
  head.kill(SIGTERM);  // waits for the process to exit
  const double exit_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  client.join();
  std::printf("[ shutdown ] serve exited %.2f s after SIGTERM; the request in flight got HTTP %d\n",
              exit_s, reply.status);
  EXPECT_EQ(reply.status, 200) << reply.body << head.log();
  EXPECT_NE(reply.body.find("\"completion_tokens\":200"), std::string::npos) << reply.body;
  EXPECT_LT(exit_s, 30.0);
  EXPECT_FALSE(testing::wait_for_port(http, 200)) << "still accepting after exit";
  EXPECT_NE(workers.procs[0]->log().find("ended the session"), std::string::npos)
      << workers.procs[0]->log();
  EXPECT_TRUE(workers.procs[0]->alive()) << "the worker must outlive its head";
}

}  // namespace
}  // namespace cohort
