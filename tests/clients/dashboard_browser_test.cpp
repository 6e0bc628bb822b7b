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
#include "support/process.h"
#include "support/shared_data.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace cohort {
namespace {

using testing::run_command;
using testing::shell_quote;

const std::string kBin = COHORT_BINARY;
const std::string kJsDir = COHORT_JS_DIR;
const std::string kArtifacts = COHORT_ARTIFACTS_DIR;
const std::string kChromium = "/usr/bin/chromium";

TEST(DashboardBrowser, ShowsThreeNodesTheirLinksAndStreamsAChat) {
  if (run_command("command -v node >/dev/null 2>&1").exit_code != 0) {
    GTEST_SKIP() << "node is not installed: scripts/bootstrap.sh installs nodejs and npm";
  }
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  ASSERT_TRUE(std::filesystem::exists(kChromium))
      << "no " << kChromium << ": install Debian's chromium package (scripts/bootstrap.sh does)";
  ASSERT_TRUE(std::filesystem::is_directory(kJsDir + "/node_modules/playwright-core"))
      << "no playwright-core in " << kJsDir << "/node_modules: run scripts/bootstrap.sh";

  testing::TempDir dir;
  const std::string key = dir.file("k");
  ASSERT_EQ(run_command(kBin + " key new > " + key).exit_code, 0);
  testing::LocalWorkers workers = testing::start_workers(kBin, 2, key, dir, "worker");
  ASSERT_EQ(workers.procs.size(), 2u);
  const int http = testing::free_port();
  testing::ChildProcess head(
      {kBin, "serve", "-m", testing::kSharedData + "/models/stories260K.gguf", "--workers",
       workers.list, "--key-file", key, "-t", "1", "--port", std::to_string(http)},
      dir.file("head.log"));
  ASSERT_TRUE(testing::wait_for_port(http, 30000)) << head.log();

  const std::string out_dir = kArtifacts + "/dashboard";
  const std::string cmd =
      "cd " + shell_quote(kJsDir) + " && COHORT_URL=http://127.0.0.1:" + std::to_string(http) +
      " COHORT_ARTIFACTS=" + shell_quote(out_dir) + " COHORT_EXPECT_NODES=3 CHROMIUM=" + kChromium +
      " timeout 120 node dashboard.mjs 2>&1";
  const testing::CommandResult r = run_command(cmd);
  std::printf("%s[ artifacts ] screenshots in %s\n", r.out.c_str(), out_dir.c_str());
  EXPECT_EQ(r.exit_code, 0) << r.out << "\n--- head log ---\n" << head.log();
  EXPECT_TRUE(std::filesystem::exists(out_dir + "/dashboard-chat.png"));
  head.kill(SIGTERM);
}

}  // namespace
}  // namespace cohort
