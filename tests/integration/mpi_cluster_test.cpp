// `--transport mpi` under mpirun: every rank runs `cohort run`, rank 0 is the head and
// prints; the text must be one node's (stories260K exactly; synthetic quantized models the
// same greedy tokens but for a first divergence at a near-tie, support/greedy_trace.h), in
// tensor and pipeline mode on 2 and 3 ranks, and hybrid on 4.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "support/greedy_trace.h"
#include "support/http_client.h"
#include "support/process.h"
#include "support/shared_data.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace cohort {
namespace {

using testing::run_command;

using testing::kCohortBinary;
// Under ASan, Open MPI's own allocations kept past MPI_Finalize are not our leaks.
const std::string kLsanOptions =
    std::string("LSAN_OPTIONS=suppressions=") + COHORT_SOURCE_DIR + "/tests/mpi/lsan.supp";
// ...and Open MPI's plugins are unloaded by exit, so their frames cannot even be named for a
// suppression: leak checking is off in the ranks (every other test checks our code's).
const std::string kAsanOptions = "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1";
const std::string kMpiEnv = "OMPI_MCA_mpi_yield_when_idle=1 " + kLsanOptions + " " + kAsanOptions;

bool have_mpirun() { return run_command("command -v mpirun >/dev/null 2>&1").exit_code == 0; }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class MpiCluster : public ::testing::Test {
 protected:
  void SetUp() override {
#if !defined(COHORT_HAVE_MPI)
    GTEST_SKIP() << "this build has no mpi transport (MPI not found at build time)";
#endif
    if (!have_mpirun()) GTEST_SKIP() << "mpirun is not installed";
  }

  // Runs the model on one node and on np MPI ranks in mode; compares the traces.
  void expect_same_as_one_node(const std::string& model, int np, const std::string& mode) {
    SCOPED_TRACE(mode + " on " + std::to_string(np) + " ranks");
    const std::string args =
        " run -m " + model + " -p 'Once upon a time' -n 64 --temp 0 -t 1 --trace ";
    const auto single = run_command(kCohortBinary + args + dir_.file("one.trace") + " 2>/dev/null");
    ASSERT_EQ(single.exit_code, 0);
    const std::string log = dir_.file("mpi.log");
    const auto multi =
        run_command(kMpiEnv +
                    " timeout 300 mpirun --allow-run-as-root --oversubscribe "
                    "--mca btl self,vader,tcp -np " +
                    std::to_string(np) + " " + kCohortBinary + args + dir_.file("mpi.trace") +
                    " --transport mpi --parallel " + mode + " 2>" + log);
    ASSERT_EQ(multi.exit_code, 0) << read_file(log);
    EXPECT_NE(read_file(log).find("mode " + mode), std::string::npos) << read_file(log);
    std::string note;
    const std::string wrong =
        testing::compare_greedy(testing::read_trace(dir_.file("one.trace")),
                                testing::read_trace(dir_.file("mpi.trace")), &note);
    EXPECT_EQ(wrong, "") << read_file(log);
    if (!note.empty()) {
      std::printf("[ near-tie ] mpi %s %d ranks: %s\n", mode.c_str(), np, note.c_str());
    } else if (wrong.empty()) {
      EXPECT_EQ(multi.out, single.out);  // rank 0 alone prints the text
    }
  }

  testing::TempDir dir_;
};

TEST_F(MpiCluster, StoriesTensorPipelineHybrid) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  const std::string model = testing::kSharedData + "/models/stories260K.gguf";
  for (int np : {2, 3}) {
    expect_same_as_one_node(model, np, "tensor");
    expect_same_as_one_node(model, np, "pipeline");
  }
  expect_same_as_one_node(model, 4, "hybrid");
}

TEST_F(MpiCluster, SyntheticQuantizedModels) {
  for (const char* type : {"q4_0", "q8_0"}) {
    const std::string model = dir_.file(std::string("synth-") + type + ".gguf");
    ASSERT_EQ(run_command(kCohortBinary +
                          " synth --dim 256 --layers 4 --heads 8 --kv-heads 4 --ffn 512 "
                          "--vocab 512 --type " +
                          type + " -o " + model + " 2>/dev/null")
                  .exit_code,
              0);
    for (int np : {2, 3}) {
      expect_same_as_one_node(model, np, "tensor");
      expect_same_as_one_node(model, np, "pipeline");
    }
  }
}

// Serving under mpirun on a 2-stage pipeline: concurrent requests overlap across the stages
// and each gets the text it gets alone. The hidden state (8 KiB) and logits (16 KiB) exceed
// Open MPI's shared-memory eager limit, so this also shows small sends never wait for the
// receiver (comm/mpi: buffered like a socket), which the stage protocol relies on.
TEST_F(MpiCluster, ServeConcurrentRequestsOnAPipeline) {
  const std::string model = dir_.file("m.gguf");
  ASSERT_EQ(run_command(kCohortBinary +
                        " synth --dim 2048 --layers 2 --heads 16 --kv-heads 8 --ffn 2048 " +
                        "--vocab 4096 --type q4_0 -o " + model + " 2>/dev/null")
                .exit_code,
            0);
  const int http = testing::free_port();
  testing::ChildProcess head({"/usr/bin/env",
                              "OMPI_MCA_mpi_yield_when_idle=1",
                              kLsanOptions,
                              kAsanOptions,
                              "mpirun",
                              "--allow-run-as-root",
                              "--oversubscribe",
                              "--mca",
                              "btl",
                              "self,vader,tcp",
                              "-np",
                              "2",
                              kCohortBinary,
                              "serve",
                              "-m",
                              model,
                              "--transport",
                              "mpi",
                              "--parallel",
                              "pipeline",
                              "-t",
                              "1",
                              "--slots",
                              "4",
                              "-c",
                              "256",
                              "--port",
                              std::to_string(http)},
                             dir_.file("serve.log"));
  ASSERT_TRUE(testing::wait_for_port(http, 60000)) << head.log();
  const std::vector<std::string> prompts = {"a b c", "d e", "f g h i", "j"};
  auto body = [](const std::string& prompt) {
    return R"({"prompt":")" + prompt + R"(","max_tokens":24,"temperature":0})";
  };
  std::vector<std::string> alone;
  for (const std::string& p : prompts) {
    auto reply =
        testing::http_request(static_cast<uint16_t>(http), "POST", "/v1/completions", body(p));
    ASSERT_EQ(reply.status, 200) << reply.body << head.log();
    alone.push_back(testing::completion_text(reply.body));
  }
  std::vector<std::string> bodies;
  for (const std::string& p : prompts) bodies.push_back(body(p));
  EXPECT_EQ(testing::concurrent_completions(static_cast<uint16_t>(http), bodies), alone)
      << head.log();
  head.kill(SIGTERM);
}

TEST_F(MpiCluster, OutsideMpirunTheTransportSaysHowToStart) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  const auto r = run_command(kCohortBinary + " run -m " + testing::kSharedData +
                             "/models/stories260K.gguf -p x -n 1 --transport mpi 2>&1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("start under mpirun"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace cohort
