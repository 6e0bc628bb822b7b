// The cluster as real processes on 127.0.0.1: workers started with `cohort worker`, a head
// started with `cohort run --workers ...`, in tensor, pipeline and hybrid modes over tcp and
// shm. Every run must print exactly what one node prints (greedy decoding).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "support/greedy_trace.h"
#include "support/http_client.h"
#include "support/local_cluster.h"
#include "support/process.h"
#include "support/shared_data.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace cohort {
namespace {

using testing::ChildProcess;
using testing::run_command;

using testing::kCohortBinary;

class Cluster : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    key_ = dir_->file("cluster.key");
    other_key_ = dir_->file("other.key");
    ASSERT_EQ(run_command(kCohortBinary + " key new > " + key_).exit_code, 0);
    ASSERT_EQ(run_command(kCohortBinary + " key new > " + other_key_).exit_code, 0);
    for (int i = 0; i < 3; ++i) start_worker(key_);
  }
  static void TearDownTestSuite() {
    workers_.clear();
    delete dir_;
  }

  static void start_worker(const std::string& key) {
    const int port = testing::free_port();
    const std::string name = "w" + std::to_string(workers_.size() + 1);
    auto w = std::make_unique<ChildProcess>(
        std::vector<std::string>{kCohortBinary, "worker", "--listen",
                                 "127.0.0.1:" + std::to_string(port), "--key-file", key, "--name",
                                 name, "-t", "1", "--no-announce"},
        dir_->file(name + ".log"));
    ASSERT_TRUE(testing::wait_for_port(port, 5000)) << w->log();
    ports_.push_back(port);
    workers_.push_back(std::move(w));
  }

  static std::string workers_arg(int n, int first = 0) {
    std::string s;
    for (int i = first; i < first + n; ++i)
      s += (s.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(ports_[i]);
    return s;
  }

  // stdout of `cohort run` (text only; logs and the placement go to stderr, kept in *log).
  static testing::CommandResult run(const std::string& model, const std::string& extra, int n,
                                    std::string* log = nullptr) {
    const std::string err = dir_->file("head.log");
    auto r = run_command(kCohortBinary + " run -m " + model + " -p 'Once upon a time' -n " +
                         std::to_string(n) + " --temp 0 -t 1 " + extra + " 2>" + err);
    std::ifstream in(err);
    std::stringstream ss;
    ss << in.rdbuf();
    if (log) *log = ss.str();
    return r;
  }

  // Greedy tokens must equal one node's, but for a first divergence at a near-tie
  // (support/greedy_trace.h).
  void expect_same_as_one_node(const std::string& model, int n_workers, const std::string& mode,
                               const std::string& transport, const std::string& extra = "") {
    SCOPED_TRACE(mode + " over " + transport + " with " + std::to_string(n_workers + 1) + " nodes");
    const std::string t1 = dir_->file("single.trace"), tn = dir_->file("multi.trace");
    const auto single = run(model, "--trace " + t1, 64);
    ASSERT_EQ(single.exit_code, 0);
    std::string log;
    const auto multi =
        run(model,
            "--trace " + tn + " --workers " + workers_arg(n_workers) + " --parallel " + mode +
                " --transport " + transport + " --key-file " + key_ + " " + extra,
            64, &log);
    EXPECT_EQ(multi.exit_code, 0) << log;
    EXPECT_NE(log.find(std::string("mode ") + mode), std::string::npos) << log;
    std::string note;
    const std::string wrong =
        testing::compare_greedy(testing::read_trace(t1), testing::read_trace(tn), &note);
    EXPECT_EQ(wrong, "") << log;
    if (!note.empty()) {
      std::printf("[ near-tie ] %s %s %d nodes: %s\n", mode.c_str(), transport.c_str(),
                  n_workers + 1, note.c_str());
    } else if (wrong.empty()) {
      EXPECT_EQ(multi.out, single.out);
    }
  }

  // A mixture-of-experts model: experts sliced by columns (tensor) and spread whole (expert)
  // on 2 and 3 nodes, and expert shards shipped to workers told not to read the file.
  void expect_experts_split_like_one_node(const std::string& model) {
    for (int workers : {1, 2}) {
      expect_same_as_one_node(model, workers, "tensor", "tcp");
      expect_same_as_one_node(model, workers, "expert", "tcp");
    }
    expect_same_as_one_node(model, 2, "expert", "tcp", "--ship-weights always");
  }

  static inline testing::TempDir* dir_ = nullptr;
  static inline std::string key_, other_key_;
  static inline std::vector<std::unique_ptr<ChildProcess>> workers_;
  static inline std::vector<int> ports_;
};

TEST_F(Cluster, StoriesTensorAndPipelineOverTcpAndShm) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  const std::string model = testing::kSharedData + "/models/stories260K.gguf";
  for (const char* transport : {"tcp", "shm"}) {
    for (int workers : {1, 2, 3}) {
      expect_same_as_one_node(model, workers, "tensor", transport);
      expect_same_as_one_node(model, workers, "pipeline", transport);
    }
    expect_same_as_one_node(model, 3, "hybrid", transport);
  }
}

TEST_F(Cluster, SyntheticQuantizedModels) {
  for (const char* type : {"q4_0", "q8_0", "f16"}) {
    const std::string model = dir_->file(std::string("synth-") + type + ".gguf");
    ASSERT_EQ(
        run_command(
            kCohortBinary +
            " synth --dim 256 --layers 4 --heads 8 --kv-heads 4 --ffn 512 --vocab 512 --type " +
            type + " -o " + model + " 2>/dev/null")
            .exit_code,
        0);
    expect_same_as_one_node(model, 1, "tensor", "tcp");
    expect_same_as_one_node(model, 3, "tensor", "tcp");
    expect_same_as_one_node(model, 2, "pipeline", "shm");
    expect_same_as_one_node(model, 3, "hybrid", "tcp");
  }
}

// Mixture-of-experts models (qwen3moe 8 experts top-2 in q8_0, Mixtral-style llama 8 experts
// top-2 in q4_0): experts sliced by columns (tensor) and spread whole (expert) on 2 and 3
// nodes, and expert shards shipped to workers that are told not to read the file. (Seed 2:
// both models generate all 64 tokens before an end of text.)
TEST_F(Cluster, SyntheticMixtureOfExpertsModels) {
  for (const auto& [arch, type] : {std::pair<std::string, std::string>{"qwen3moe", "q8_0"},
                                   std::pair<std::string, std::string>{"llama", "q4_0"}}) {
    const std::string model = dir_->file("moe-" + arch + "-" + type + ".gguf");
    ASSERT_EQ(run_command(kCohortBinary + " synth --arch " + arch +
                          " --dim 128 --layers 3 --heads 8 --kv-heads 4 --ffn 256 --experts 8 "
                          "--experts-used 2 --expert-ffn 128 --vocab 400 --seed 2 --type " +
                          type + " -o " + model + " 2>/dev/null")
                  .exit_code,
              0);
    expect_experts_split_like_one_node(model);
  }
}

// deepseek2 (latent attention, 8 experts top-2 in 4 groups of which 2 may be chosen, a
// shared expert, a dense first layer, q8_0): heads and expert columns split (tensor) and
// experts spread whole (expert) on 2 and 3 nodes give one node's greedy tokens, also when
// the workers get shard files shipped instead of reading the model.
TEST_F(Cluster, SyntheticDeepseek2Model) {
  const std::string model = dir_->file("deepseek2-q8_0.gguf");
  ASSERT_EQ(run_command(kCohortBinary +
                        " synth --arch deepseek2 --dim 128 --layers 3 --heads 8 --ffn 256 "
                        "--experts 8 --experts-used 2 --expert-ffn 128 --expert-groups 4 "
                        "--expert-groups-used 2 --q-lora 64 --kv-lora 64 --rope-dim 8 "
                        "--head-dim 24 --v-dim 16 --vocab 400 --seed 2 --type q8_0 -o " +
                        model + " 2>/dev/null")
                .exit_code,
            0);
  expect_experts_split_like_one_node(model);
}

// The same in DeepSeek V3's GGUF layout (attn_kv_b split per head into attn_k_b/attn_v_b,
// YaRN rope with the softmax's log multiplier): shipped tensor shards slice the 3-D
// per-head tensors by head.
TEST_F(Cluster, SyntheticDeepseek2V3Layout) {
  const std::string model = dir_->file("deepseek2-v3-layout.gguf");
  ASSERT_EQ(run_command(kCohortBinary +
                        " synth --arch deepseek2 --dim 128 --layers 3 --heads 8 --ffn 256 "
                        "--experts 8 --experts-used 2 --expert-ffn 128 --expert-groups 4 "
                        "--expert-groups-used 2 --q-lora 64 --kv-lora 64 --rope-dim 8 "
                        "--head-dim 24 --v-dim 16 --vocab 400 --seed 3 --type q8_0 --ctx 32768 "
                        "--rope-scaling yarn --rope-factor 8 --rope-orig-ctx 4096 "
                        "--yarn-log-mul 0.1 --split-kv-b -o " +
                        model + " 2>/dev/null")
                .exit_code,
            0);
  expect_experts_split_like_one_node(model);
  expect_same_as_one_node(model, 2, "tensor", "tcp", "--ship-weights always");
}

TEST_F(Cluster, WorkerWithWrongKeyIsRefusedAndTheRestServe) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  const std::string model = testing::kSharedData + "/models/stories260K.gguf";
  start_worker(other_key_);  // the fourth worker holds another key
  const auto single = run(model, "", 32);
  std::string log;
  const auto multi = run(model,
                         "--workers " + workers_arg(2) + ",127.0.0.1:" + std::to_string(ports_[3]) +
                             " --parallel pipeline --key-file " + key_,
                         32, &log);
  EXPECT_EQ(multi.exit_code, 0) << log;
  EXPECT_EQ(multi.out, single.out);
  EXPECT_NE(log.find("refused"), std::string::npos) << log;
  EXPECT_NE(workers_[3]->log().find("refused"), std::string::npos) << workers_[3]->log();
  EXPECT_NE(log.find("3 ranks"), std::string::npos) << log;
}

}  // namespace
}  // namespace cohort

namespace cohort {
namespace {

// Two network namespaces joined by a veth pair stand in for two hosts: the worker announces
// itself by multicast on its side, the head discovers it (`--workers auto`) and runs the
// model in tensor mode across the link.
// Two network namespaces joined by a veth pair: a (10.77.0.1) and b (10.77.0.2), removed
// (with every process left in b) when destroyed. ok is false where namespaces cannot be
// made (no root, no iproute2).
struct NetnsPair {
  std::string a, b, va, vb;
  bool ok = false;
  NetnsPair() {
    const std::string id = std::to_string(::getpid() % 100000) + std::to_string(counter()++);
    a = "cohort-a-" + id;
    b = "cohort-b-" + id;
    va = "cva" + id;
    vb = "cvb" + id;
    if (sh("ip netns add " + a).exit_code != 0) return;
    sh("ip netns add " + b);
    for (const std::string& cmd :
         {"ip link add " + va + " type veth peer name " + vb, "ip link set " + va + " netns " + a,
          "ip link set " + vb + " netns " + b, "ip -n " + a + " addr add 10.77.0.1/24 dev " + va,
          "ip -n " + b + " addr add 10.77.0.2/24 dev " + vb,
          "ip -n " + a + " link set " + va + " up", "ip -n " + b + " link set " + vb + " up",
          "ip -n " + a + " link set lo up", "ip -n " + b + " link set lo up"}) {
      auto r = sh(cmd);
      if (r.exit_code != 0) {
        ADD_FAILURE() << cmd << ": " << r.out;
        return;
      }
    }
    ok = true;
  }
  ~NetnsPair() {
    run_command("ip netns pids " + b + " | xargs -r kill -9 2>/dev/null; ip netns pids " + a +
                " | xargs -r kill -9 2>/dev/null; ip netns del " + a +
                " 2>/dev/null; ip netns del " + b + " 2>/dev/null");
  }
  static testing::CommandResult sh(const std::string& cmd) { return run_command(cmd + " 2>&1"); }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

TEST(ClusterNetns, DiscoveryByMulticastAcrossVeth) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  NetnsPair ns;
  if (!ns.ok) GTEST_SKIP() << "cannot create network namespaces here (needs root and iproute2)";
  const std::string a = ns.a, b = ns.b;
  testing::TempDir dir;
  const std::string key = dir.file("k");
  ASSERT_EQ(run_command(kCohortBinary + " key new > " + key).exit_code, 0);
  const std::string model = testing::kSharedData + "/models/stories260K.gguf";
  testing::ChildProcess worker(
      {"/usr/sbin/ip", "netns", "exec", b, kCohortBinary, "worker", "--listen", "10.77.0.2:52417",
       "--key-file", key, "--name", "far", "-t", "1"},
      dir.file("worker.log"));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto single = run_command(kCohortBinary + " run -m " + model +
                                  " -p 'Once upon a time' -n 48 --temp 0 -t 1 2>/dev/null");
  const auto multi =
      run_command("ip netns exec " + a + " " + kCohortBinary + " run -m " + model +
                  " -p 'Once upon a time' -n 48 --temp 0 -t 1 --workers auto --bind 10.77.0.1" +
                  " --parallel tensor --key-file " + key + " 2>" + dir.file("head.log"));
  std::ifstream in(dir.file("head.log"));
  std::stringstream log;
  log << in.rdbuf();
  EXPECT_EQ(multi.exit_code, 0) << log.str() << worker.log();
  EXPECT_EQ(multi.out, single.out) << log.str();
  EXPECT_NE(log.str().find("discovered 1 workers by multicast"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("10.77.0.2"), std::string::npos) << log.str();
}

}  // namespace
}  // namespace cohort

namespace cohort {
namespace {

// `cohort serve` as the head of a 3-node pipeline: /health, a greedy /v1/completions equal
// to one node's text, and `cohort cluster status` naming the placement.
TEST(ClusterServe, CompletionsAndStatusFromTheHead) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  testing::TempDir dir;
  const std::string key = dir.file("k");
  ASSERT_EQ(run_command(kCohortBinary + " key new > " + key).exit_code, 0);
  std::vector<std::unique_ptr<ChildProcess>> workers;
  std::string list;
  for (int i = 0; i < 2; ++i) {
    const int port = testing::free_port();
    workers.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{kCohortBinary, "worker", "--listen",
                                 "127.0.0.1:" + std::to_string(port), "--key-file", key, "-t", "1",
                                 "--no-announce"},
        dir.file("w" + std::to_string(i) + ".log")));
    ASSERT_TRUE(testing::wait_for_port(port, 5000));
    list += (list.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(port);
  }
  const std::string model = testing::kSharedData + "/models/stories260K.gguf";
  const int http = testing::free_port();
  ChildProcess head({kCohortBinary, "serve", "-m", model, "--workers", list, "--parallel",
                     "pipeline", "--key-file", key, "-t", "1", "--port", std::to_string(http)},
                    dir.file("head.log"));
  ASSERT_TRUE(testing::wait_for_port(http, 10000)) << head.log();
  auto health = testing::http_request(static_cast<uint16_t>(http), "GET", "/health", "");
  EXPECT_EQ(health.status, 200) << head.log();
  auto reply = testing::http_request(
      static_cast<uint16_t>(http), "POST", "/v1/completions",
      R"({"model":"stories260K","prompt":"Once upon a time","max_tokens":40,"temperature":0})");
  ASSERT_EQ(reply.status, 200) << reply.body << head.log();
  const auto single = run_command(kCohortBinary + " run -m " + model +
                                  " -p 'Once upon a time' -n 40 --temp 0 2>/dev/null");
  EXPECT_NE(single.out.find(reply.body.substr(reply.body.find("\"text\":\"") + 8, 30)),
            std::string::npos)
      << reply.body << "\n"
      << single.out;
  auto status =
      run_command(kCohortBinary + " cluster status --head 127.0.0.1:" + std::to_string(http));
  EXPECT_EQ(status.exit_code, 0);
  EXPECT_NE(status.out.find("mode pipeline, 3 ranks"), std::string::npos) << status.out;
  head.kill(SIGTERM);
}

}  // namespace
}  // namespace cohort

namespace cohort {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Weight shipping: workers that must not use their own copy of the model get their shard
// from the head, keep it in their cache, and compute exactly what they compute from the
// model file (same bytes, same kernels: identical text). A second run uses the cache; a
// damaged cached shard is detected by its hash, dropped and shipped again. (--balance even:
// on a loaded test machine the measured speeds, and with them the shards, could change
// between runs.)
TEST(ClusterShipping, WorkersGetTheirShardsKeepThemAndDetectDamage) {
  testing::TempDir dir;
  const std::string key = dir.file("k"), model = dir.file("m.gguf");
  ASSERT_EQ(run_command(kCohortBinary + " key new > " + key).exit_code, 0);
  ASSERT_EQ(
      run_command(kCohortBinary + " synth --dim 256 --layers 4 --heads 8 --kv-heads 4 --ffn 512 " +
                  "--vocab 512 --type q4_0 -o " + model + " 2>/dev/null")
          .exit_code,
      0);
  testing::LocalWorkers started =
      testing::start_workers(kCohortBinary, 2, key, dir, "s", [&](const std::string& name) {
        return std::vector<std::string>{"--cache-dir", dir.file(name + "-cache")};
      });
  ASSERT_EQ(started.procs.size(), 2u);
  auto& workers = started.procs;
  const std::string& list = started.list;
  auto run = [&](const std::string& mode, const std::string& extra, std::string* log) {
    const std::string err = dir.file("head.log");
    auto r = run_command(kCohortBinary + " run -m " + model +
                         " -p 'Once upon a time' -n 24 --temp 0 -t 1 " + "--workers " + list +
                         " --parallel " + mode + " --balance even --key-file " + key + " " + extra +
                         " 2>" + err);
    std::ifstream in(err);
    std::stringstream ss;
    ss << in.rdbuf();
    *log = ss.str();
    return r;
  };
  auto asked = [&](int w) { return count(workers[w]->log(), "asking the head for shard"); };
  auto cached = [&](int w) { return count(workers[w]->log(), "using cached shard"); };

  for (const std::string mode : {"tensor", "pipeline"}) {
    SCOPED_TRACE(mode);
    std::string log;
    const auto local = run(mode, "", &log);
    ASSERT_EQ(local.exit_code, 0) << log;
    ASSERT_FALSE(local.out.empty());
    const size_t asked0 = asked(0), asked1 = asked(1), cached0 = cached(0);

    const auto shipped = run(mode, "--ship-weights always", &log);
    ASSERT_EQ(shipped.exit_code, 0) << log;
    EXPECT_EQ(shipped.out, local.out);
    EXPECT_NE(log.find("shipping"), std::string::npos) << log;
    EXPECT_EQ(asked(0), asked0 + 1) << workers[0]->log();
    EXPECT_EQ(asked(1), asked1 + 1) << workers[1]->log();

    const auto again = run(mode, "--ship-weights always", &log);
    ASSERT_EQ(again.exit_code, 0) << log;
    EXPECT_EQ(again.out, local.out);
    EXPECT_EQ(asked(0), asked0 + 1) << "the cached shard was not used\n" << workers[0]->log();
    EXPECT_EQ(cached(0), cached0 + 1) << workers[0]->log();

    // Damage worker 0's cached shard (one byte in the tensor data).
    std::string shard_path;
    for (const auto& e : std::filesystem::directory_iterator(dir.file("s0-cache")))
      if (e.path().extension() == ".gguf" &&
          e.last_write_time() >= (shard_path.empty()
                                      ? e.last_write_time()
                                      : std::filesystem::last_write_time(shard_path)))
        shard_path = e.path().string();
    ASSERT_FALSE(shard_path.empty());
    {
      std::fstream f(shard_path, std::ios::in | std::ios::out | std::ios::binary);
      const auto size = std::filesystem::file_size(shard_path);
      f.seekg(static_cast<std::streamoff>(size - 100));
      char c = 0;
      f.read(&c, 1);
      c = static_cast<char>(c ^ 0x5a);
      f.seekp(static_cast<std::streamoff>(size - 100));
      f.write(&c, 1);
    }
    const auto repaired = run(mode, "--ship-weights always", &log);
    ASSERT_EQ(repaired.exit_code, 0) << log;
    EXPECT_EQ(repaired.out, local.out);
    EXPECT_NE(workers[0]->log().find("no longer matches its hash"), std::string::npos)
        << workers[0]->log();
    EXPECT_EQ(asked(0), asked0 + 2) << workers[0]->log();
  }
}

// A cut link (the veth taken down mid-generation, so no FIN or RST ever arrives): the head
// notices within seconds (kernel keepalive and user timeouts on every cluster socket) and
// ends with a clear error instead of hanging; so does the worker.
TEST(ClusterNetns, CutLinkEndsTheRunWithAnErrorWithinSeconds) {
  NetnsPair ns;
  if (!ns.ok) GTEST_SKIP() << "cannot create network namespaces here (needs root and iproute2)";
  testing::TempDir dir;
  const std::string key = dir.file("k"), model = dir.file("m.gguf");
  ASSERT_EQ(run_command(kCohortBinary + " key new > " + key).exit_code, 0);
  // A run long enough to be still going when the link drops: 16384 positions of f32 at dim 512
  // take minutes (a context of 2048 took 7.7 s on a Zen 5 VM, and the run ended before the cut).
  ASSERT_EQ(
      run_command(kCohortBinary + " synth --dim 512 --layers 8 --heads 8 --kv-heads 8 --ffn 1536 " +
                  "--vocab 1024 --ctx 16384 --type f32 -o " + model + " 2>/dev/null")
          .exit_code,
      0);
  testing::ChildProcess worker(
      {"/usr/sbin/ip", "netns", "exec", ns.b, kCohortBinary, "worker", "--listen",
       "10.77.0.2:52417", "--key-file", key, "--name", "far", "-t", "1", "--no-announce"},
      dir.file("worker.log"));
  ASSERT_TRUE(run_command("for i in $(seq 50); do ip netns exec " + ns.b +
                          " ss -ltn | grep -q 10.77.0.2:52417 && exit 0; sleep 0.1; done; exit 1")
                  .exit_code == 0)
      << worker.log();
  testing::ChildProcess head({"/usr/sbin/ip", "netns",     "exec",       ns.a,
                              kCohortBinary,  "run",       "-m",         model,
                              "-p",           "the",       "-n",         "100000",
                              "-c",           "16384",     "--temp",     "0",
                              "-t",           "1",         "--workers",  "10.77.0.2:52417",
                              "--bind",       "10.77.0.1", "--parallel", "pipeline",
                              "--key-file",   key},
                             dir.file("head.log"));
  // Wait until the model is ready on the cluster and tokens flow, then cut the link. ("prompt:"
  // is the run's closing summary: waiting for it would wait for the end of the run.)
  for (int i = 0; i < 100 && head.log().find("ready in") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_TRUE(head.alive()) << head.log();
  ASSERT_EQ(head.log().find("prompt:"), std::string::npos) << "the run ended before the cut\n"
                                                           << head.log();
  ASSERT_EQ(run_command("ip -n " + ns.a + " link set " + ns.va + " down").exit_code, 0);
  const auto t0 = std::chrono::steady_clock::now();
  while (head.alive() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[ cut link ] the head ended %.1f s after the link went down\n", s);
  EXPECT_FALSE(head.alive()) << "the head hangs on a cut link\n" << head.log();
  EXPECT_LT(s, 6.0) << head.log();
  EXPECT_NE(head.log().find("error:"), std::string::npos) << head.log();
}

// Where multicast is blocked: workers started with --no-announce --peers HEAD announce by
// unicast to the head's discovery port, and `--workers auto` finds them. The head also has
// the workers measure the link between them, and prints it.
TEST(ClusterPeers, UnicastAnnouncementsAndWorkerToWorkerLinks) {
  testing::TempDir dir;
  const std::string key = dir.file("k");
  ASSERT_EQ(run_command(kCohortBinary + " key new > " + key).exit_code, 0);
  const int discovery = testing::free_port();
  const std::string group = "239.255.77.77:" + std::to_string(discovery);
  std::vector<std::unique_ptr<ChildProcess>> workers;
  for (int i = 0; i < 2; ++i) {
    const int port = testing::free_port();
    workers.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{kCohortBinary, "worker", "--listen",
                                 "127.0.0.1:" + std::to_string(port), "--key-file", key, "--name",
                                 "p" + std::to_string(i), "-t", "1", "--no-announce", "--multicast",
                                 group, "--peers", "127.0.0.1:" + std::to_string(discovery)},
        dir.file("p" + std::to_string(i) + ".log")));
    ASSERT_TRUE(testing::wait_for_port(port, 5000)) << workers.back()->log();
  }
  const std::string model = testing::kSharedData + "/models/stories260K.gguf";
  const std::string base =
      kCohortBinary + " run -m " + model + " -p 'Once upon a time' -n 32 --temp 0 -t 1";
  const auto single = run_command(base + " 2>/dev/null");
  ASSERT_EQ(single.exit_code, 0);
  const std::string err = dir.file("head.log");
  const auto multi =
      run_command(base + " --workers auto --multicast " + group +
                  " --bind 127.0.0.1 --parallel tensor --key-file " + key + " 2>" + err);
  std::ifstream in(err);
  std::stringstream log;
  log << in.rdbuf();
  ASSERT_EQ(multi.exit_code, 0) << log.str();
  EXPECT_EQ(multi.out, single.out);
  EXPECT_NE(log.str().find("discovered 2 workers"), std::string::npos) << log.str();
  EXPECT_TRUE(log.str().find("link p0 <-> p1: rtt") != std::string::npos ||
              log.str().find("link p1 <-> p0: rtt") != std::string::npos)
      << log.str();
}

// A worker serves one head at a time: a second head is told why and runs without it.
TEST(ClusterPeers, BusyWorkerRefusesASecondHead) {
  testing::TempDir dir;
  const std::string key = dir.file("k");
  ASSERT_EQ(run_command(kCohortBinary + " key new > " + key).exit_code, 0);
  const int port = testing::free_port();
  ChildProcess worker({kCohortBinary, "worker", "--listen", "127.0.0.1:" + std::to_string(port),
                       "--key-file", key, "--name", "busy", "-t", "1", "--no-announce"},
                      dir.file("w.log"));
  ASSERT_TRUE(testing::wait_for_port(port, 5000));
  const std::string model = testing::kSharedData + "/models/stories260K.gguf";
  const std::string workers = "127.0.0.1:" + std::to_string(port);
  const int http = testing::free_port();
  ChildProcess head_a({kCohortBinary, "serve", "-m", model, "--workers", workers, "--key-file", key,
                       "-t", "1", "--port", std::to_string(http)},
                      dir.file("a.log"));
  ASSERT_TRUE(testing::wait_for_port(http, 20000)) << head_a.log();
  const std::string base =
      kCohortBinary + " run -m " + model + " -p 'Once upon a time' -n 16 --temp 0 -t 1";
  const auto single = run_command(base + " 2>/dev/null");
  const auto second = run_command(base + " --workers " + workers + " --key-file " + key + " 2>" +
                                  dir.file("b.log"));
  std::ifstream in(dir.file("b.log"));
  std::stringstream log;
  log << in.rdbuf();
  EXPECT_EQ(second.exit_code, 0) << log.str();
  EXPECT_EQ(second.out, single.out);
  EXPECT_NE(log.str().find("worker busy is serving another head"), std::string::npos) << log.str();
  // The first head still serves.
  auto reply = testing::http_request(static_cast<uint16_t>(http), "POST", "/v1/completions",
                                     R"({"prompt":"Once","max_tokens":4,"temperature":0})");
  EXPECT_EQ(reply.status, 200) << reply.body;
  head_a.kill(SIGTERM);
}

// Each node holds only its shard: a pipeline worker's resident memory grows by about the
// bytes of its layers (the file is mapped; only the shard's pages are touched), not by the
// whole model.
TEST(ClusterMemory, PipelineWorkerHoldsOnlyItsShard) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "resident memory under ASan includes its quarantine of freed blocks; this is "
                  "measured in the release build";
#endif
  testing::TempDir dir;
  const std::string key = dir.file("k"), model = dir.file("m.gguf");
  ASSERT_EQ(run_command(kCohortBinary + " key new > " + key).exit_code, 0);
  // 8 layers of 8 MiB (f16, dim 512, ffn 2048) plus 2 MiB each of embeddings and output.
  ASSERT_EQ(
      run_command(kCohortBinary +
                  " synth --dim 512 --layers 8 --heads 8 --kv-heads 8 --ffn 2048 --vocab 2048 " +
                  "--type f16 -o " + model + " 2>/dev/null")
          .exit_code,
      0);
  const double model_mib = std::filesystem::file_size(model) / 1048576.0;
  // auto: the worker maps the model file itself; always: it receives and maps a shard file.
  for (const std::string ship : {"auto", "always"}) {
    SCOPED_TRACE("--ship-weights " + ship);
    const int port = testing::free_port();
    ChildProcess worker(
        {kCohortBinary, "worker", "--listen", "127.0.0.1:" + std::to_string(port), "--key-file",
         key, "-t", "1", "--no-announce", "--cache-dir", dir.file("cache")},
        dir.file("w.log"));
    ASSERT_TRUE(testing::wait_for_port(port, 5000));
    const double idle_mib = worker.rss_kib() / 1024.0;
    const int http = testing::free_port();
    ChildProcess head(
        {kCohortBinary, "serve", "-m", model, "--workers", "127.0.0.1:" + std::to_string(port),
         "--parallel", "pipeline", "--key-file", key, "-t", "1", "-c", "256", "--port",
         std::to_string(http), "--ship-weights", ship},
        dir.file("head.log"));
    ASSERT_TRUE(testing::wait_for_port(http, 20000)) << head.log();
    auto reply = testing::http_request(static_cast<uint16_t>(http), "POST", "/v1/completions",
                                       R"({"prompt":"the cat","max_tokens":4,"temperature":0})");
    ASSERT_EQ(reply.status, 200) << reply.body;
    const double busy_mib = worker.rss_kib() / 1024.0;
    // The planner's estimate of rank 1's bytes (its layers, output projection and KV cache),
    // from the placement the head printed: "rank 1: ... ~36.0 MiB".
    const std::string log = head.log();
    const size_t at = log.find("rank 1:");
    ASSERT_NE(at, std::string::npos) << log;
    const size_t tilde = log.find('~', at);
    const double shard_mib = std::stod(log.substr(tilde + 1));
    std::printf(
        "[ memory ] ship %s: model %.1f MiB; worker idle %.1f MiB, serving %.1f MiB (+%.1f); its "
        "shard %.1f MiB\n",
        ship.c_str(), model_mib, idle_mib, busy_mib, busy_mib - idle_mib, shard_mib);
    if (ship == "always") {
      EXPECT_NE(worker.log().find("receiving shard"), std::string::npos) << worker.log();
    }
    // Allowed: the shard +15%, +16 MiB for buffers, thread stacks and allocator slack.
    EXPECT_GE(busy_mib - idle_mib, 0.5 * shard_mib) << "the worker did not touch its shard?";
    EXPECT_LE(busy_mib - idle_mib, 1.15 * shard_mib + 16) << log;
    EXPECT_LT(shard_mib, 0.8 * model_mib) << log;
    head.kill(SIGTERM);
  }
}

}  // namespace
}  // namespace cohort

namespace cohort {
namespace {

// `cohort serve` on a two-node pipeline: four different greedy requests at once (decoded
// interleaved on the head's slots, both stages busy) each get the text they get alone.
TEST(ClusterServe, ConcurrentCompletionsOnAPipelineEqualEachAlone) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  testing::TempDir dir;
  const std::string key = dir.file("k");
  ASSERT_EQ(run_command(kCohortBinary + " key new > " + key).exit_code, 0);
  const int port = testing::free_port();
  ChildProcess worker({kCohortBinary, "worker", "--listen", "127.0.0.1:" + std::to_string(port),
                       "--key-file", key, "-t", "1", "--no-announce"},
                      dir.file("w.log"));
  ASSERT_TRUE(testing::wait_for_port(port, 5000));
  const std::string model = testing::kSharedData + "/models/stories260K.gguf";
  const std::vector<std::string> prompts = {"Once upon a time", "The little dog",
                                            "Lily and Tom went to", "One day, a big"};
  auto body = [](const std::string& prompt) {
    return R"({"prompt":")" + prompt + R"(","max_tokens":48,"temperature":0})";
  };
  for (const char* transport : {"tcp", "shm"}) {
    SCOPED_TRACE(transport);
    const int http = testing::free_port();
    ChildProcess head(
        {kCohortBinary, "serve", "-m", model, "--workers", "127.0.0.1:" + std::to_string(port),
         "--parallel", "pipeline", "--transport", transport, "--key-file", key, "-t", "1",
         "--slots", "4", "--port", std::to_string(http)},
        dir.file(std::string("head-") + transport + ".log"));
    ASSERT_TRUE(testing::wait_for_port(http, 10000)) << head.log() << worker.log();
    std::vector<std::string> alone;
    for (const std::string& p : prompts) {
      auto reply =
          testing::http_request(static_cast<uint16_t>(http), "POST", "/v1/completions", body(p));
      ASSERT_EQ(reply.status, 200) << reply.body << head.log();
      alone.push_back(testing::completion_text(reply.body));
      EXPECT_GT(alone.back().size(), 20u) << reply.body;
    }
    std::vector<std::string> bodies;
    for (const std::string& p : prompts) bodies.push_back(body(p));
    EXPECT_EQ(testing::concurrent_completions(static_cast<uint16_t>(http), bodies), alone)
        << head.log();
    EXPECT_NE(head.log().find("4 slots"), std::string::npos) << head.log();
    head.kill(SIGTERM);
  }
  EXPECT_NE(worker.log().find("4 slots"), std::string::npos) << worker.log();
}

}  // namespace
}  // namespace cohort
