// `cohort bench cluster` end to end on stories260K with 2 nodes (a short grid): the JSON
// lines carry every field, syncs per token are what the placement implies and what the
// head counted, communication time grows with the injected latency, hybrid on 2 nodes is
// skipped with a reason, the SVG is well-formed, and bad arguments exit 2 with a message.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
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
constexpr int64_t kLayers = 5;  // stories260K
constexpr int64_t kDelayUs = 1000;

std::vector<nlohmann::json> cluster_json_lines(const std::string& out) {
  std::vector<nlohmann::json> v;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) v.push_back(nlohmann::json::parse(line, nullptr, false));
  }
  return v;
}

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(CliBenchCluster, ShortGridOnTwoNodes) {
  if (!std::filesystem::exists(kStoriesGguf)) GTEST_SKIP() << "no " << kStoriesGguf;
  testing::TempDir dir;
  const std::string svg_path = dir.file("plot.svg");
  auto r = run_command(kCohortBinary + " bench cluster -m " + kStoriesGguf +
                       " --nodes 2 -t 1 --modes tensor,pipeline,hybrid --transports tcp"
                       " --latencies 0," +
                       std::to_string(kDelayUs) + " -p 8 -n 6 -r 1 --json --svg " + svg_path +
                       " 2>" + dir.file("stderr.txt"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::map<std::string, std::map<int64_t, nlohmann::json>> by_mode;  // mode -> latency -> line
  int skipped = 0, projections = 0;
  for (const nlohmann::json& j : cluster_json_lines(r.out)) {
    ASSERT_TRUE(j.is_object()) << r.out;
    const std::string kind = j.value("kind", "");
    if (kind == "projection") {
      ++projections;
      EXPECT_GT(j.value("tg_tok_s", 0.0), 0.0) << j.dump();
      continue;
    }
    if (kind == "skipped") {
      ++skipped;
      EXPECT_EQ(j.value("mode", ""), "hybrid") << j.dump();
      EXPECT_NE(j.value("reason", "").find("same placement as tensor"), std::string::npos)
          << j.dump();
      continue;
    }
    ASSERT_EQ(kind, "measurement") << j.dump();
    EXPECT_EQ(j.value("model", ""), "stories260K.gguf");
    EXPECT_EQ(j.value("nodes", 0), 2);
    EXPECT_EQ(j.value("transport", ""), "tcp");
    for (const char* key : {"pp_tok_s", "ttft_ms", "tg_tok_s", "comm_ms_per_token",
                            "bytes_per_token", "head_ops_per_token", "compute_share"}) {
      ASSERT_TRUE(j.contains(key) && j[key].is_number()) << key << ": " << j.dump();
      EXPECT_GT(j[key].get<double>(), 0.0) << key << ": " << j.dump();
    }
    by_mode[j.value("mode", "")][j.value("link_latency_us", int64_t{-1})] = j;
  }
  EXPECT_EQ(skipped, 2);  // hybrid at both latencies
  EXPECT_GT(projections, 0);
  ASSERT_EQ(by_mode.size(), 2u) << r.out;
  // Tensor over 2 ranks: header + tokens broadcasts and 2 all-reduces per layer; the head
  // computes the logits itself. Pipeline of 2: the broadcasts, the hidden state sent to
  // stage 1, the logits back. The head takes part in every one of them.
  const std::map<std::string, int64_t> syncs = {{"tensor", 2 + 2 * kLayers}, {"pipeline", 4}};
  for (const auto& [mode, lines] : by_mode) {
    ASSERT_EQ(lines.size(), 2u) << mode;
    for (const auto& [lat, j] : lines) {
      EXPECT_EQ(j.value("syncs_per_token", int64_t{0}), syncs.at(mode)) << j.dump();
      EXPECT_NEAR(j.value("head_ops_per_token", 0.0), static_cast<double>(syncs.at(mode)), 1e-9)
          << j.dump();
    }
    const double comm0 = lines.at(0).value("comm_ms_per_token", 0.0);
    const double comm1 = lines.at(kDelayUs).value("comm_ms_per_token", 0.0);
    // Every one of the head's operations waits at least one injected delay.
    EXPECT_GE(comm1, static_cast<double>(syncs.at(mode)) * kDelayUs * 1e-3) << mode;
    EXPECT_GT(comm1, comm0) << mode;
  }
  std::ifstream in(svg_path);
  std::stringstream svg;
  svg << in.rdbuf();
  const std::string s = svg.str();
  EXPECT_EQ(s.rfind("<?xml", 0), 0u) << s;
  EXPECT_NE(s.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(s.find("</svg>"), std::string::npos);
  EXPECT_EQ(count_of(s, "<polyline"), 2u);
  EXPECT_NE(s.find(">tensor/tcp</text>"), std::string::npos);
  EXPECT_NE(s.find(">pipeline/tcp</text>"), std::string::npos);
  EXPECT_EQ(count_of(s, "<text"), count_of(s, "</text>"));
}

TEST(CliBenchCluster, BadArgumentsExitTwo) {
  if (!std::filesystem::exists(kStoriesGguf)) GTEST_SKIP() << "no " << kStoriesGguf;
  auto r =
      run_command(kCohortBinary + " bench cluster -m " + kStoriesGguf + " --modes sideways 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown mode 'sideways'"), std::string::npos) << r.out;
  r = run_command(kCohortBinary + " bench cluster -m " + kStoriesGguf + " --nodes 1 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  r = run_command(kCohortBinary + " bench cluster -m " + kStoriesGguf +
                  " --transports carrier-pigeon 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown transport"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace cohort
