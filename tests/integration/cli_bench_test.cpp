// `cohort bench` end to end on stories260K: the JSON lines parse and carry positive
// numbers, the table and the roofline print, and argument errors exit 2 with a message.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "support/shared_data.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace cohort {
namespace {

using testing::run_command;

using testing::kCohortBinary;
using testing::kStoriesGguf;

std::vector<nlohmann::json> json_lines(const std::string& out) {
  std::vector<nlohmann::json> v;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    v.push_back(nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false));
  }
  return v;
}

TEST(CliBench, JsonLinesHavePositiveNumbers) {
  if (!std::filesystem::exists(kStoriesGguf)) GTEST_SKIP() << "no " << kStoriesGguf;
  auto r =
      run_command(kCohortBinary + " bench -m " + kStoriesGguf + " -t 2 -p 9 -b 4 -n 5 -r 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<nlohmann::json> lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  const char* tests[] = {"pp9", "tg5"};
  for (size_t i = 0; i < lines.size(); ++i) {
    const nlohmann::json& j = lines[i];
    ASSERT_TRUE(j.is_object()) << r.out;
    EXPECT_EQ(j.value("test", ""), tests[i]);
    EXPECT_EQ(j.value("model", ""), "stories260K.gguf");
    EXPECT_EQ(j.value("type", ""), "f32");
    EXPECT_EQ(j.value("threads", 0), 2);
    for (const char* key :
         {"tok_s", "bytes", "bytes_per_token", "params", "gbps", "bw_frac", "gflops", "fma_frac"}) {
      ASSERT_TRUE(j.contains(key) && j[key].is_number()) << key << ": " << j.dump();
      EXPECT_GT(j[key].get<double>(), 0.0) << key << ": " << j.dump();
    }
    ASSERT_TRUE(j.contains("tok_s_sd") && j["tok_s_sd"].is_number()) << j.dump();
    EXPECT_GE(j["tok_s_sd"].get<double>(), 0.0);
    EXPECT_EQ(j["rep_tok_s"].size(), 2u) << j.dump();
  }
  // By default each tg repetition has a read probe around it: its own fraction of bandwidth.
  const nlohmann::json& tg = lines[1];
  ASSERT_TRUE(tg.contains("bw_frac_bracketed")) << tg.dump();
  EXPECT_GT(tg["bw_frac_bracketed"].get<double>(), 0.0);
  EXPECT_GT(tg["read_gbps_bracketed"].get<double>(), 0.0);
  EXPECT_EQ(tg["rep_read_before"].size(), 2u) << tg.dump();
  EXPECT_EQ(tg["rep_read_after"].size(), 2u) << tg.dump();
  EXPECT_FALSE(lines[0].contains("bw_frac_bracketed")) << lines[0].dump();

  auto plain = run_command(kCohortBinary + " bench -m " + kStoriesGguf +
                           " -t 1 -p 0 -n 3 -r 1 --json --no-bracket");
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  const std::vector<nlohmann::json> plain_lines = json_lines(plain.out);
  ASSERT_EQ(plain_lines.size(), 1u) << plain.out;
  EXPECT_FALSE(plain_lines[0].contains("bw_frac_bracketed")) << plain_lines[0].dump();
}

// A mixture-of-experts model: bytes per token count only the routed experts, and the
// routing counts follow the results (per layer, every token routed to 2 of 8 experts).
TEST(CliBench, MixtureOfExpertsPrintsExpertUsage) {
  testing::TempDir dir;
  const std::string model = dir.file("moe.gguf");
  ASSERT_EQ(run_command(kCohortBinary +
                        " synth --arch qwen3moe --dim 64 --layers 2 --heads 4 --kv-heads 2 "
                        "--experts 8 --experts-used 2 --expert-ffn 64 --vocab 320 -o " +
                        model + " 2>/dev/null")
                .exit_code,
            0);
  auto r =
      run_command(kCohortBinary + " bench -m " + model + " -t 1 -p 6 -n 4 -r 1 --json 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<nlohmann::json> lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;  // pp6, tg4, then layers 0 and 1
  const auto bytes = std::filesystem::file_size(model);
  EXPECT_LT(lines[0].value("bytes_per_token", uint64_t{0}), bytes / 2) << lines[0].dump();
  // Warm-up and one timed repetition of each test: 2 x 6 prompt tokens, 2 x (4 prompt + 4
  // generated) tokens, each routed to 2 experts.
  const uint64_t want = 2 * (2 * 6 + 2 * (4 + 4));
  for (size_t l = 0; l < 2; ++l) {
    const nlohmann::json& j = lines[2 + l];
    EXPECT_EQ(j.value("test", ""), "expert_usage");
    EXPECT_EQ(j.value("layer", -1), static_cast<int>(l));
    ASSERT_TRUE(j.contains("tokens") && j["tokens"].size() == 8u) << j.dump();
    uint64_t sum = 0;
    for (const auto& v : j["tokens"]) sum += v.get<uint64_t>();
    EXPECT_EQ(sum, want) << j.dump();
  }
  auto table =
      run_command(kCohortBinary + " bench -m " + model + " -t 1 -p 0 -n 2 -r 1 2>/dev/null");
  ASSERT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("expert usage"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("layer   1: min"), std::string::npos) << table.out;
}

TEST(CliBench, TableAndSkippedTests) {
  if (!std::filesystem::exists(kStoriesGguf)) GTEST_SKIP() << "no " << kStoriesGguf;
  auto r =
      run_command(kCohortBinary + " bench -m " + kStoriesGguf + " -t 1 -p 0 -n 3 -r 1 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("| model"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tg3"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("pp"), std::string::npos) << r.out;
}

TEST(CliBench, NoGemmAndPromptOnly) {
  if (!std::filesystem::exists(kStoriesGguf)) GTEST_SKIP() << "no " << kStoriesGguf;
  auto r = run_command(kCohortBinary + " bench -m " + kStoriesGguf +
                       " -t 2 -p 4 -n 0 -r 1 --no-gemm --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<nlohmann::json> lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_EQ(lines[0].value("test", ""), "pp4");
  EXPECT_GT(lines[0].value("tok_s", 0.0), 0.0) << r.out;
}

// --isa runs another table this CPU has (ref always), and its lines say so; an unknown name
// is an argument error that lists the tables there are.
TEST(CliBench, IsaChoosesTheKernels) {
  if (!std::filesystem::exists(kStoriesGguf)) GTEST_SKIP() << "no " << kStoriesGguf;
  auto r = run_command(kCohortBinary + " bench -m " + kStoriesGguf +
                       " -t 1 -p 4 -n 2 -r 1 --isa ref --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<nlohmann::json> lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  for (const nlohmann::json& line : lines) {
    EXPECT_EQ(line.value("isa", ""), "ref") << r.out;
    EXPECT_GT(line.value("tok_s", 0.0), 0.0) << r.out;
  }
  auto bad = run_command(kCohortBinary + " bench -m " + kStoriesGguf + " -n 2 --isa sse9 2>&1");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("no sse9 kernels"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("ref"), std::string::npos) << bad.out;
}

// --probes measures the roofline with another table's probes (the json line names it); an
// unknown name is the same argument error as --isa's.
TEST(CliBench, ProbesChooseTheRooflineTable) {
  auto r = run_command(kCohortBinary + " bench --roofline -t 1 --json --probes ref");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<nlohmann::json> lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_EQ(lines[0].value("isa", ""), "ref") << r.out;
  EXPECT_GT(lines[0].value("fma_gflops_1", 0.0), 0.0) << r.out;
  auto best = run_command(kCohortBinary + " bench --roofline -t 1 --json");
  ASSERT_EQ(best.exit_code, 0) << best.out;
  const std::vector<nlohmann::json> best_lines = json_lines(best.out);
  ASSERT_EQ(best_lines.size(), 1u) << best.out;
  EXPECT_NE(best_lines[0].value("isa", ""), "") << best.out;
  auto bad = run_command(kCohortBinary + " bench --roofline --probes sse9 2>&1");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("no sse9 kernels"), std::string::npos) << bad.out;
  // A model's test lines name the kernels that ran them (isa) and the probes that judged
  // them (probes): the best table's unless --probes names another.
  if (!std::filesystem::exists(kStoriesGguf)) GTEST_SKIP() << "no " << kStoriesGguf;
  const std::string best_isa = best_lines[0].value("isa", "");
  for (const char* probes_arg : {"", "ref"}) {
    const std::string probes = probes_arg;
    auto m = run_command(kCohortBinary + " bench -m " + kStoriesGguf + " -t 1 -p 4 -n 2 -r 1 " +
                         "--isa ref --json" + (probes.empty() ? "" : " --probes " + probes));
    ASSERT_EQ(m.exit_code, 0) << m.out;
    const std::vector<nlohmann::json> tests = json_lines(m.out);
    ASSERT_EQ(tests.size(), 2u) << m.out;
    for (const nlohmann::json& line : tests) {
      EXPECT_EQ(line.value("isa", ""), "ref") << m.out;
      EXPECT_EQ(line.value("probes", ""), probes.empty() ? best_isa : probes) << m.out;
    }
  }
}

TEST(CliBench, RooflineAlone) {
  auto r = run_command(kCohortBinary + " bench --roofline -t 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<nlohmann::json> lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_EQ(lines[0].value("test", ""), "roofline");
  EXPECT_EQ(lines[0].value("threads", 0), 2);
  for (const char* key : {"read_gbps_1", "read_gbps_n", "fma_gflops_1", "fma_gflops_n"}) {
    EXPECT_GT(lines[0].value(key, 0.0), 0.0) << key << ": " << r.out;
  }
  // The read passes' spread: slowest <= median <= best, on 1 and on N threads.
  EXPECT_GE(lines[0].value("read_passes", 0), 5) << r.out;
  for (const char* n : {"1", "n"}) {
    const std::string key = std::string("read_gbps_") + n;
    const double best = lines[0].value(key, 0.0);
    const double median = lines[0].value(key + "_median", 0.0);
    const double slowest = lines[0].value(key + "_min", 0.0);
    EXPECT_GT(slowest, 0.0) << r.out;
    EXPECT_LE(slowest, median) << r.out;
    EXPECT_LE(median, best) << r.out;
  }
  auto text = run_command(kCohortBinary + " bench --roofline -t 1");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("GB/s"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("GFLOP/s"), std::string::npos) << text.out;
}

TEST(CliBench, ArgumentErrorsExit2WithAMessage) {
  const std::string model = " -m " + kStoriesGguf;
  const std::string bad[] = {"",  // neither a model nor --roofline
                             model + " -p 0 -n 0",
                             model + " -r 0",
                             model + " -p -1",
                             model + " -n x",
                             model + " -t -3",
                             model + " --no-such-flag"};
  for (const std::string& args : bad) {
    auto r = run_command(kCohortBinary + " bench" + args + " 2>&1");
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.out;
    EXPECT_FALSE(r.out.empty()) << args;
    EXPECT_EQ(r.out.find("| model"), std::string::npos) << args << ": " << r.out;
  }
}

}  // namespace
}  // namespace cohort
