// Several models through the ollama npm client: `cohort serve --models-dir DIR --max-loaded 1`
// over stories260K (linked into a temp dir) and a synthetic model made here, then
// tests/js/ollama_models.mjs (list, a chat to each in turn, ps, keep_alive 0).
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "support/node_scripts.h"
#include "support/process.h"
#include "support/shared_data.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "support/two_models_dir.h"

namespace cohort {
namespace {

using testing::run_command;

using testing::kCohortBinary;
using testing::kJsDir;

TEST(NpmModels, OllamaClientAcrossTwoModels) {
  COHORT_SKIP_WITHOUT_NODE();
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  ASSERT_EQ(testing::missing_npm_packages(kJsDir), "");
  testing::TempDir dir;
  const std::string models = dir.file("models");
  ASSERT_TRUE(testing::make_two_models_dir(kCohortBinary, models));
  const int port = testing::free_port();
  testing::ChildProcess server({kCohortBinary, "serve", "--models-dir", models, "--max-loaded", "1",
                                "-t", "1", "-c", "256", "--port", std::to_string(port)},
                               dir.file("serve.log"));
  ASSERT_TRUE(testing::wait_for_port(port, 20000)) << server.log();
  const testing::CommandResult r = run_command(testing::node_script_command(
      kJsDir, port, "ollama_models.mjs",
      {{"COHORT_MODEL", "stories260K.gguf"}, {"COHORT_MODELS", "stories260K.gguf,tiny.gguf"}},
      120));
  EXPECT_EQ(r.exit_code, 0) << r.out << "\n--- server log ---\n" << server.log();
  std::printf("%s", r.out.c_str());
  server.kill(SIGTERM);
}

}  // namespace
}  // namespace cohort
