// The `cohort` binary end to end: `cohort run` prints exactly the reference text for both
// model files, synth + inspect + run work on a fresh synthetic model, and bad input gives a
// one-line error and a non-zero exit, never a crash.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/reference_cases.h"
#include "support/shared_data.h"
#include "support/subprocess.h"

namespace cohort {
namespace {

using testing::run_command;
using testing::shell_quote;

using testing::kCohortBinary;
using testing::kSharedData;

bool have_data() {
  return std::filesystem::exists(kSharedData + "/reference/stories260K-greedy.txt");
}

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("cohort-it-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

TEST(CliRun, StoriesPrintExactlyTheReferenceText) {
  if (!have_data()) GTEST_SKIP() << "shared data not found at " << kSharedData;
  auto cases = testing::load_reference_cases(kSharedData + "/reference/stories260K-greedy.txt");
  ASSERT_GE(cases.size(), 2u);
  const std::string models = kSharedData + "/models/";
  const std::string sources[] = {
      "-m " + models + "stories260K.gguf",
      "-m " + models + "stories260K.bin --tokenizer " + models + "tok512.bin"};
  for (const auto& c : cases) {
    const int64_t n = c.steps + 1 - static_cast<int64_t>(c.prompt_ids.size());
    for (const auto& src : sources) {
      SCOPED_TRACE(c.name + " " + src);
      auto r = run_command(kCohortBinary + " run " + src + " -p " + shell_quote(c.prompt) + " -n " +
                           std::to_string(n) + " --temp 0 2>/dev/null");
      EXPECT_EQ(r.exit_code, 0);
      EXPECT_EQ(r.out, c.output);
    }
  }
}

TEST(CliRun, InspectWorksOnEveryGgufInSharedData) {
  if (!have_data()) GTEST_SKIP() << "shared data not found at " << kSharedData;
  int n = 0;
  for (const auto& dir : {kSharedData + "/models", kSharedData + "/vocab"}) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() != ".gguf") continue;
      SCOPED_TRACE(e.path().string());
      auto r = run_command(kCohortBinary + " inspect " + e.path().string() + " 2>&1");
      EXPECT_EQ(r.exit_code, 0) << r.out;
      EXPECT_NE(r.out.find("architecture:"), std::string::npos);
      EXPECT_NE(r.out.find("totals:"), std::string::npos);
      EXPECT_NE(r.out.find("tokenizer:"), std::string::npos);
      ++n;
    }
  }
  EXPECT_GE(n, 7);
  auto r = run_command(kCohortBinary + " inspect " + kSharedData + "/models/stories260K.gguf");
  EXPECT_NE(r.out.find("blk.4.ffn_down.weight"), std::string::npos);
  EXPECT_NE(r.out.find("48 tensors"), std::string::npos);
}

TEST(CliRun, SynthInspectRunRoundTrip) {
  const std::string path = temp_path("tiny-q4_0.gguf");
  auto s = run_command(kCohortBinary +
                       " synth --arch qwen3 --dim 128 --layers 2 --heads 4 --kv-heads 2 " +
                       "--ffn 256 --vocab 600 --type q4_0 -o " + path + " 2>&1");
  ASSERT_EQ(s.exit_code, 0) << s.out;
  auto i = run_command(kCohortBinary + " inspect " + path);
  EXPECT_EQ(i.exit_code, 0);
  EXPECT_NE(i.out.find("qwen3"), std::string::npos);
  EXPECT_NE(i.out.find("q4_0"), std::string::npos);
  auto r =
      run_command(kCohortBinary + " run -m " + path + " -p 'the cat' -n 12 --seed 7 2>/dev/null");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("the cat", 0), 0u) << r.out;
  auto again =
      run_command(kCohortBinary + " run -m " + path + " -p 'the cat' -n 12 --seed 7 2>/dev/null");
  EXPECT_EQ(again.out, r.out) << "same seed must give the same text";
  std::filesystem::remove(path);
}

TEST(CliRun, BadInputGivesOneLineErrorAndNonZeroExit) {
  const std::string junk = temp_path("junk.gguf");
  {
    FILE* f = std::fopen(junk.c_str(), "wb");
    std::fputs("GGUF\x03\x00\x00\x00garbage", f);
    std::fclose(f);
  }
  for (const std::string& cmd :
       {kCohortBinary + " run -m " + junk + " -p hi", kCohortBinary + " inspect " + junk,
        kCohortBinary + " run -m /nonexistent/model.gguf -p hi",
        kCohortBinary + " synth --dim 10 --heads 3 -o " + temp_path("x.gguf")}) {
    SCOPED_TRACE(cmd);
    auto r = run_command(cmd + " 2>&1");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_LT(r.exit_code, 128) << "killed by a signal";
    EXPECT_NE(r.out.find("error: "), std::string::npos) << r.out;
  }
  std::filesystem::remove(junk);
}

}  // namespace
}  // namespace cohort
