// The dashboard in a real browser: a head and 2 workers on loopback serving stories260K,
// and tests/js/dashboard.mjs driving headless Chromium (playwright-core) against it: the 3
// nodes and their links are drawn, a chat message gets a streamed answer. Screenshots are
// kept under <build>/artifacts/ (the path is printed).
//
// Skips only when node or the shared model is missing; a missing Chromium or playwright-core
// is a failure that names the fix (scripts/bootstrap.sh installs both).
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "support/local_cluster.h"
#include "support/node_scripts.h"
#include "support/process.h"
#include "support/shared_data.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace cohort {
namespace {

using testing::run_command;

using testing::kCohortBinary;
using testing::kJsDir;
const std::string kArtifacts = COHORT_ARTIFACTS_DIR;
const std::string kChromium = "/usr/bin/chromium";

TEST(DashboardBrowser, ShowsThreeNodesTheirLinksAndStreamsAChat) {
  COHORT_SKIP_WITHOUT_NODE();
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  ASSERT_TRUE(std::filesystem::exists(kChromium))
      << "no " << kChromium << ": install Debian's chromium package (scripts/bootstrap.sh does)";
  ASSERT_EQ(testing::missing_npm_packages(kJsDir, "playwright-core"), "");

  testing::TempDir dir;
  const std::string key = dir.file("k");
  ASSERT_EQ(run_command(kCohortBinary + " key new > " + key).exit_code, 0);
  testing::LocalWorkers workers = testing::start_workers(kCohortBinary, 2, key, dir, "worker");
  ASSERT_EQ(workers.procs.size(), 2u);
  const int http = testing::free_port();
  testing::ChildProcess head(
      {kCohortBinary, "serve", "-m", testing::kSharedData + "/models/stories260K.gguf", "--workers",
       workers.list, "--key-file", key, "-t", "1", "--port", std::to_string(http)},
      dir.file("head.log"));
  ASSERT_TRUE(testing::wait_for_port(http, 30000)) << head.log();

  const std::string out_dir = kArtifacts + "/dashboard";
  const testing::CommandResult r = run_command(testing::node_script_command(
      kJsDir, http, "dashboard.mjs",
      {{"COHORT_ARTIFACTS", out_dir}, {"COHORT_EXPECT_NODES", "3"}, {"CHROMIUM", kChromium}}, 120));
  std::printf("%s[ artifacts ] screenshots in %s\n", r.out.c_str(), out_dir.c_str());
  EXPECT_EQ(r.exit_code, 0) << r.out << "\n--- head log ---\n" << head.log();
  EXPECT_TRUE(std::filesystem::exists(out_dir + "/dashboard-chat.png"));
  head.kill(SIGTERM);
}

}  // namespace
}  // namespace cohort
