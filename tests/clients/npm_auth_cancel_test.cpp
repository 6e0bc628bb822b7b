// API keys and cancellation through the real SDKs (tests/js/auth_cancel.mjs): `cohort serve
// --api-key --slots 1` on a synthetic model slow enough per token (tests/support/
// fault_fixture.h) that a 1000-token stream is still running when the client aborts it.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "support/fault_fixture.h"
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

TEST(NpmAuthCancel, WrongKeysAre401InEachSdkAndAnAbortedStreamFreesItsSlot) {
  COHORT_SKIP_WITHOUT_NODE();
  ASSERT_EQ(testing::missing_npm_packages(kJsDir), "");
  testing::TempDir dir;
  const testing::FaultFiles files = testing::make_key_and_slow_model(kCohortBinary, dir);
  ASSERT_EQ(files.error, "");
  const std::string api_key = "sk-cohort-test-key";
  const int port = testing::free_port();
  testing::ChildProcess server({kCohortBinary, "serve", "-m", files.model, "-t", "1", "--slots",
                                "1", "--api-key", api_key, "--port", std::to_string(port)},
                               dir.file("serve.log"));
  ASSERT_TRUE(testing::wait_for_port(port, 20000)) << server.log();
  const testing::CommandResult r = run_command(
      testing::node_script_command(kJsDir, port, "auth_cancel.mjs",
                                   {{"COHORT_MODEL", "m.gguf"}, {"COHORT_API_KEY", api_key}}, 120));
  std::printf("%s", r.out.c_str());
  EXPECT_EQ(r.exit_code, 0) << r.out << "\n--- server log ---\n" << server.log();
  EXPECT_EQ(server.log().find(api_key), std::string::npos) << "the key must never be logged";
  server.kill(SIGTERM);
}

}  // namespace
}  // namespace cohort
