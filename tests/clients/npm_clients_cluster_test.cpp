// The real clients against a 2-node cluster: `cohort serve` heading one worker, next to a
// one-node `cohort serve` of the same file. The chat/completion/tool scripts of each SDK
// (openai.mjs, anthropic.mjs, ollama.mjs: whole and streamed answers, tool round trips,
// errors) run against the cluster, and embeddings.mjs with COHORT_REF_URL naming the one-node
// server, so its vectors must equal one node's (within the script's kTolerance). stories260K
// split by tensor parallelism; a synthetic qwen3 Q8_0 model split into a pipeline. (The
// one-node runs of the scripts are NpmClients.*.)
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

using testing::ChildProcess;
using testing::run_command;

using testing::kCohortBinary;
using testing::kJsDir;

class NpmClientsCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    COHORT_SKIP_WITHOUT_NODE();
    ASSERT_EQ(testing::missing_npm_packages(kJsDir), "");
  }

  // Serves `model` on one node and on two (`mode`), then runs the scripts on the cluster.
  void run_on_two_nodes(const std::string& model, const std::string& mode) {
    const std::string key = dir_.file("k");
    ASSERT_EQ(run_command(kCohortBinary + " key new > " + key).exit_code, 0);
    testing::LocalWorkers workers = testing::start_workers(kCohortBinary, 1, key, dir_, "w");
    ASSERT_EQ(workers.procs.size(), 1u);
    const int one_port = testing::free_port(), head_port = testing::free_port();
    ChildProcess one({kCohortBinary, "serve", "-m", model, "-t", "1", "-c", "512", "--port",
                      std::to_string(one_port)},
                     dir_.file("one.log"));
    ChildProcess head(
        {kCohortBinary, "serve", "-m", model, "--workers", workers.list, "--parallel", mode,
         "--key-file", key, "-t", "1", "-c", "512", "--port", std::to_string(head_port)},
        dir_.file("head.log"));
    ASSERT_TRUE(testing::wait_for_port(one_port, 20000)) << one.log();
    ASSERT_TRUE(testing::wait_for_port(head_port, 20000)) << head.log();
    const std::string name = std::filesystem::path(model).filename().string();
    const testing::CommandResult r = run_command(testing::node_script_command(
        kJsDir, head_port, "embeddings.mjs",
        {{"COHORT_REF_URL", "http://127.0.0.1:" + std::to_string(one_port)},
         {"COHORT_MODEL", name}},
        300));
    EXPECT_EQ(r.exit_code, 0) << r.out << "\n--- head log ---\n" << head.log();
    EXPECT_NE(r.out.find("cluster vs one node"), std::string::npos) << r.out;
    std::printf("%s", r.out.c_str());
    for (const char* script : {"openai.mjs", "anthropic.mjs", "ollama.mjs"}) {
      const testing::CommandResult c = run_command(
          testing::node_script_command(kJsDir, head_port, script, {{"COHORT_MODEL", name}}, 300));
      EXPECT_EQ(c.exit_code, 0) << script << ":\n" << c.out << "\n--- head log ---\n" << head.log();
      std::printf("%s", c.out.c_str());
    }
    head.kill(SIGTERM);
    one.kill(SIGTERM);
  }

  testing::TempDir dir_;
};

TEST_F(NpmClientsCluster, StoriesTensorParallel) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  run_on_two_nodes(testing::kSharedData + "/models/stories260K.gguf", "tensor");
}

TEST_F(NpmClientsCluster, SyntheticQwen3Pipeline) {
  const std::string model = dir_.file("synth-qwen3.gguf");
  ASSERT_EQ(run_command(kCohortBinary +
                        " synth --arch qwen3 --dim 128 --layers 4 --heads 4 --kv-heads 2 " +
                        "--ffn 256 --vocab 1024 --type q8_0 -o " + model + " 2>/dev/null")
                .exit_code,
            0);
  run_on_two_nodes(model, "pipeline");
}

}  // namespace
}  // namespace cohort
