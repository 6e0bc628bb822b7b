// runtime::LocalWorkers: starts real `cohort worker` processes on loopback with a fresh key,
// and cleans them and its directory up.
#include "runtime/local_workers.h"

#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <filesystem>

#include "net/cluster_key.h"

namespace cohort::runtime {
namespace {

TEST(LocalWorkers, StartsListeningWorkersAndRemovesEverything) {
  LocalWorkersOptions o;
  o.count = 2;
  o.executable = COHORT_BINARY;
  std::string dir;
  std::vector<pid_t> pids;
  {
    auto w = LocalWorkers::start(o);
    ASSERT_TRUE(w.is_ok()) << w.status().message();
    dir = (*w)->dir();
    EXPECT_EQ((*w)->size(), 2u);
    EXPECT_TRUE(net::load_key_file((*w)->key_file()).is_ok());
    const std::string list = (*w)->workers_list();
    EXPECT_EQ(std::count(list.begin(), list.end(), ','), 1) << list;
    for (size_t i = 0; i < (*w)->size(); ++i) {
      EXPECT_TRUE((*w)->process(i).alive());
      pids.push_back((*w)->process(i).pid());
    }
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
  for (pid_t p : pids) EXPECT_NE(::kill(p, 0), 0) << "worker " << p << " still running";
}

TEST(LocalWorkers, AWorkerThatCannotStartIsReportedWithItsLog) {
  LocalWorkersOptions o;
  o.count = 1;
  o.executable = "/nonexistent/cohort";
  o.start_timeout_ms = 300;
  auto w = LocalWorkers::start(o);
  ASSERT_FALSE(w.is_ok());
  EXPECT_EQ(w.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(w.status().message().find("exec failed"), std::string::npos) << w.status().message();
}

}  // namespace
}  // namespace cohort::runtime
