// Conformance with the clients people's tools use: starts `cohort serve` on the trained
// stories260K model and runs each script in tests/js (the official openai, @anthropic-ai/sdk
// and ollama npm packages) against it with node. The scripts assert that real text came
// back, whole and streamed, with consistent usage and finish reasons.
//
// Skips only when node itself is missing; missing node_modules is a failure that names the
// fix (scripts/bootstrap.sh runs `npm ci` in tests/js).
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <memory>
#include <string>

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
const std::string kModelName = "stories260K.gguf";

class NpmClients : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::have_node() || !testing::have_shared_data()) return;
    dir_ = new testing::TempDir();
    port_ = testing::free_port();
    server_ = new testing::ChildProcess(
        {kCohortBinary, "serve", "-m", testing::kSharedData + "/models/" + kModelName, "-t", "1",
         "--port", std::to_string(port_)},
        dir_->file("serve.log"));
    testing::wait_for_port(port_, 20000);
  }
  static void TearDownTestSuite() {
    if (server_ != nullptr) server_->kill(SIGTERM);
    delete server_;
    delete dir_;
    server_ = nullptr;
    dir_ = nullptr;
  }

  void SetUp() override {
    COHORT_SKIP_WITHOUT_NODE();
    COHORT_SKIP_WITHOUT_SHARED_DATA();
    ASSERT_EQ(testing::missing_npm_packages(kJsDir), "");
    ASSERT_TRUE(server_->alive()) << server_->log();
  }

  void run_script(const std::string& script) {
    const testing::CommandResult r = run_command(
        testing::node_script_command(kJsDir, port_, script, {{"COHORT_MODEL", kModelName}}, 300));
    EXPECT_EQ(r.exit_code, 0) << r.out << "\n--- server log ---\n" << server_->log();
    std::printf("%s", r.out.c_str());
  }

  static testing::TempDir* dir_;
  static testing::ChildProcess* server_;
  static int port_;
};

testing::TempDir* NpmClients::dir_ = nullptr;
testing::ChildProcess* NpmClients::server_ = nullptr;
int NpmClients::port_ = 0;

TEST_F(NpmClients, OpenAi) { run_script("openai.mjs"); }
TEST_F(NpmClients, Anthropic) { run_script("anthropic.mjs"); }
TEST_F(NpmClients, Ollama) { run_script("ollama.mjs"); }
TEST_F(NpmClients, Embeddings) { run_script("embeddings.mjs"); }

}  // namespace
}  // namespace cohort
