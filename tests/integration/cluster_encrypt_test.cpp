// Encrypted cluster traffic (--encrypt) with real processes on 127.0.0.1: a head and
// workers that all seal their links give one node's greedy tokens, and a node whose
// setting differs is refused at the handshake, with the reason on both sides.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "support/greedy_trace.h"
#include "support/local_cluster.h"
#include "support/process.h"
#include "support/shared_data.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace cohort {
namespace {

using testing::run_command;

using testing::kCohortBinary;

class EncryptedCluster : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    key_ = dir_->file("cluster.key");
    ASSERT_EQ(run_command(kCohortBinary + " key new > " + key_).exit_code, 0);
    sealed_ = new testing::LocalWorkers(testing::start_workers(
        kCohortBinary, 2, key_, *dir_, "sealed",
        [](const std::string&) { return std::vector<std::string>{"--encrypt"}; }));
    plain_ =
        new testing::LocalWorkers(testing::start_workers(kCohortBinary, 1, key_, *dir_, "plain"));
  }
  static void TearDownTestSuite() {
    delete sealed_;
    delete plain_;
    delete dir_;
  }

  // stdout of `cohort run` (stderr in *log).
  static testing::CommandResult run(const std::string& extra, int n, std::string* log) {
    const std::string err = dir_->file("head.log");
    auto r = run_command(kCohortBinary + " run -m " + model() + " -p 'Once upon a time' -n " +
                         std::to_string(n) + " --temp 0 -t 1 " + extra + " 2>" + err);
    std::ifstream in(err);
    std::stringstream ss;
    ss << in.rdbuf();
    *log = ss.str();
    return r;
  }

  static std::string model() { return testing::kSharedData + "/models/stories260K.gguf"; }

  // The first n sealed workers' "host:port" list.
  static std::string sealed_workers(int n) {
    const std::string& all = sealed_->list;
    if (n == 2) return all;
    return all.substr(0, all.find(','));
  }

  void expect_same_as_one_node(int n_workers, const std::string& mode,
                               const std::string& transport) {
    SCOPED_TRACE(mode + " over " + transport + " with " + std::to_string(n_workers + 1) +
                 " sealed nodes");
    const std::string t1 = dir_->file("single.trace"), tn = dir_->file("multi.trace");
    std::string log;
    const auto single = run("--trace " + t1, 48, &log);
    ASSERT_EQ(single.exit_code, 0) << log;
    const auto multi =
        run("--trace " + tn + " --workers " + sealed_workers(n_workers) + " --parallel " + mode +
                " --transport " + transport + " --key-file " + key_ + " --encrypt",
            48, &log);
    ASSERT_EQ(multi.exit_code, 0) << log;
    EXPECT_NE(log.find(std::to_string(n_workers + 1) + " ranks"), std::string::npos) << log;
    std::string note;
    EXPECT_EQ(testing::compare_greedy(testing::read_trace(t1), testing::read_trace(tn), &note), "")
        << log;
    if (note.empty()) {
      EXPECT_EQ(multi.out, single.out);
    }
  }

  static inline testing::TempDir* dir_ = nullptr;
  static inline std::string key_;
  static inline testing::LocalWorkers* sealed_ = nullptr;
  static inline testing::LocalWorkers* plain_ = nullptr;
};

TEST_F(EncryptedCluster, SealedClusterMatchesOneNode) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  expect_same_as_one_node(1, "tensor", "tcp");
  expect_same_as_one_node(2, "pipeline", "tcp");
  expect_same_as_one_node(1, "tensor", "shm");  // sealed control channel, local data plane
}

// A plaintext head meets a sealed worker and the other way round: the worker is refused
// (the head says why and runs on the rest), and the worker's log says why too.
TEST_F(EncryptedCluster, MismatchedSettingIsRefusedOnBothSides) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  const std::string sealed_one = sealed_workers(1);
  for (const bool head_seals : {false, true}) {
    SCOPED_TRACE(head_seals ? "sealed head, plaintext worker" : "plaintext head, sealed worker");
    const std::string good = head_seals ? sealed_one : plain_->list;
    const std::string odd = head_seals ? plain_->list : sealed_one;
    std::string log;
    const auto r = run("--workers " + good + "," + odd + " --parallel pipeline --key-file " + key_ +
                           (head_seals ? " --encrypt" : ""),
                       16, &log);
    EXPECT_EQ(r.exit_code, 0) << log;
    EXPECT_NE(log.find("refused"), std::string::npos) << log;
    EXPECT_NE(log.find("--encrypt"), std::string::npos) << log;
    EXPECT_NE(log.find("2 ranks"), std::string::npos) << log;
    const std::string odd_log = head_seals ? plain_->procs[0]->log() : sealed_->procs[0]->log();
    EXPECT_NE(odd_log.find("--encrypt"), std::string::npos) << odd_log;
  }
}

TEST_F(EncryptedCluster, EncryptWithoutWorkersIsAnError) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  std::string log;
  const auto r = run("--encrypt", 4, &log);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(log.find("--encrypt"), std::string::npos) << log;
  EXPECT_NE(log.find("--workers"), std::string::npos) << log;
}

}  // namespace
}  // namespace cohort
