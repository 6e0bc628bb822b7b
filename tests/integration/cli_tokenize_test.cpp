// `cohort tokenize` end to end on the vocab-only GGUFs of the shared data: the printed ids
// equal llama.cpp's test vectors, with the text from --stdin (byte-exact) and as an
// argument; bad input gives one "error: ..." line and a non-zero exit.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/shared_data.h"
#include "support/subprocess.h"
#include "support/vocab_vectors.h"

namespace cohort {
namespace {

using testing::run_command;
using testing::shell_quote;

const std::string kVocabDir = testing::kSharedData + "/vocab/";
using testing::kCohortBinary;

std::string tokenize_temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("cohort-it-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::string ids_line(const std::vector<int32_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? " " : "") + std::to_string(ids[i]);
  return s + "\n";
}

// Every vector of one vocabulary through `cohort tokenize --stdin` (and, when as_argument,
// also as the TEXT argument after "--").
void check_vocab(const std::string& vocab, bool as_argument) {
  const std::string gguf = kVocabDir + vocab;
  if (!std::filesystem::exists(gguf)) GTEST_SKIP() << "no test data: " << gguf;
  testing::VocabVectors v;
  std::string error;
  ASSERT_TRUE(testing::load_vocab_vectors(gguf, &v, &error)) << error;
  const std::string input = tokenize_temp_path("input.txt");
  int passed = 0;
  for (size_t i = 0; i < v.texts.size(); ++i) {
    SCOPED_TRACE(vocab + " case " + std::to_string(i));
    {
      std::ofstream f(input, std::ios::binary | std::ios::trunc);
      f << v.texts[i];
    }
    const std::string want = ids_line(v.ids[i]);
    auto r = run_command(kCohortBinary + " tokenize -m " + shell_quote(gguf) +
                         " --no-bos --stdin < " + shell_quote(input) + " 2>&1");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(r.out, want);
    bool ok = r.exit_code == 0 && r.out == want;
    if (as_argument) {
      auto a = run_command(kCohortBinary + " tokenize -m " + shell_quote(gguf) + " --no-bos -- " +
                           shell_quote(v.texts[i]) + " 2>&1");
      EXPECT_EQ(a.exit_code, 0) << a.out;
      EXPECT_EQ(a.out, want);
      ok &= a.exit_code == 0 && a.out == want;
    }
    passed += ok;
  }
  std::remove(input.c_str());
  std::printf("[ cli      ] %s: %d/%zu cases pass\n", vocab.c_str(), passed, v.texts.size());
}

TEST(CliTokenize, Gpt2VectorsStdinAndArgument) { check_vocab("ggml-vocab-gpt-2.gguf", true); }
TEST(CliTokenize, DeepseekLlmVectorsStdin) { check_vocab("ggml-vocab-deepseek-llm.gguf", false); }
TEST(CliTokenize, DeepseekCoderVectorsStdin) {
  check_vocab("ggml-vocab-deepseek-coder.gguf", false);
}
TEST(CliTokenize, LlamaSpmVectorsStdin) { check_vocab("ggml-vocab-llama-spm.gguf", false); }

TEST(CliTokenize, BosAndSpecialFlags) {
  const std::string gguf = kVocabDir + "ggml-vocab-deepseek-coder.gguf";
  if (!std::filesystem::exists(gguf)) GTEST_SKIP() << "no test data: " << gguf;
  const std::string m = kCohortBinary + " tokenize -m " + shell_quote(gguf) + " ";
  // The vocabulary asks for BOS (32013); --no-bos drops it.
  auto r = run_command(m + "Hello 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("32013 ", 0), 0u) << r.out;
  auto nb = run_command(m + "--no-bos Hello 2>&1");
  EXPECT_EQ(nb.out, r.out.substr(6));
  // The end-of-sentence text is one id only with --special.
  const std::string eos =
      "'<\xEF\xBD\x9C"
      "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>'";
  auto sp = run_command(m + "--no-bos --special " + eos + " 2>&1");
  EXPECT_EQ(sp.out, "32014\n");
  auto plain = run_command(m + "--no-bos " + eos + " 2>&1");
  EXPECT_EQ(plain.exit_code, 0);
  EXPECT_NE(plain.out, "32014\n");
  // Empty text: just the BOS, or an empty line.
  EXPECT_EQ(run_command(m + "'' 2>&1").out, "32013\n");
  EXPECT_EQ(run_command(m + "--no-bos --stdin < /dev/null 2>&1").out, "\n");
}

TEST(CliTokenize, ErrorsAreOneLine) {
  const std::string gguf = kVocabDir + "ggml-vocab-gpt-2.gguf";
  if (!std::filesystem::exists(gguf)) GTEST_SKIP() << "no test data: " << gguf;
  auto expect_error = [](const std::string& cmd) {
    SCOPED_TRACE(cmd);
    auto r = run_command(cmd + " 2>&1 >/dev/null");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_EQ(r.out.rfind("error: ", 0), 0u) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  };
  expect_error(kCohortBinary + " tokenize -m /nonexistent.gguf hello");
  expect_error(kCohortBinary + " tokenize -m " + shell_quote(gguf) + " --stdin hello < /dev/null");
  expect_error(kCohortBinary + " tokenize -m " + shell_quote(gguf));
  const std::string not_gguf = tokenize_temp_path("not.gguf");
  {
    std::ofstream f(not_gguf, std::ios::binary);
    f << "this is not a gguf file";
  }
  expect_error(kCohortBinary + " tokenize -m " + shell_quote(not_gguf) + " hello");
  std::remove(not_gguf.c_str());
}

}  // namespace
}  // namespace cohort
