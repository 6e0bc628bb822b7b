// `cohort demo --once`: a head and 2 workers on loopback, one chat answer streamed, tok/s,
// the placement over 3 nodes and the dashboard URL; with no -m, a synthetic model whose
// output says it has random weights.
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "support/shared_data.h"
#include "support/subprocess.h"

namespace cohort {
namespace {

using testing::run_command;

using testing::kCohortBinary;

// True when s has a run of 3 or more ASCII letters (a word, not noise).
bool has_word(const std::string& s) {
  int run = 0;
  for (char c : s) {
    run = std::isalpha(static_cast<unsigned char>(c)) ? run + 1 : 0;
    if (run >= 3) return true;
  }
  return false;
}

void expect_three_node_demo(const std::string& out) {
  EXPECT_NE(out.find("placement ("), std::string::npos) << out;
  EXPECT_NE(out.find("3 nodes"), std::string::npos) << out;
  for (const char* node : {"head ", "worker0 ", "worker1 "}) {
    EXPECT_NE(out.find(std::string("  ") + node), std::string::npos) << node << "\n" << out;
  }
  const size_t tokens = out.find(" tokens in ");
  ASSERT_NE(tokens, std::string::npos) << out;
  EXPECT_NE(out.find(" tok/s (prompt ", tokens), std::string::npos) << out;
  const size_t url = out.find("dashboard: http://127.0.0.1:");
  ASSERT_NE(url, std::string::npos) << out;
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(out[url + 28]))) << out;
}

TEST(Demo, OnceWithStories260KStreamsAnAnswerOnThreeNodes) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  const testing::CommandResult r =
      run_command("timeout 60 " + kCohortBinary + " demo --once --port 0 -n 48 -m " +
                  testing::kSharedData + "/models/stories260K.gguf 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  expect_three_node_demo(r.out);
  EXPECT_NE(r.out.find("model: stories260K.gguf"), std::string::npos) << r.out;
  // The streamed answer sits between "model: " on the chat line and the tok/s line.
  const size_t you = r.out.find("\nyou: ");
  ASSERT_NE(you, std::string::npos) << r.out;
  const size_t start = r.out.find("\nmodel: ", you);
  const size_t end = r.out.find(" tokens in ", start);
  ASSERT_NE(start, std::string::npos) << r.out;
  const std::string answer = r.out.substr(start + 8, end - start - 8);
  EXPECT_TRUE(has_word(answer)) << "no words: " << answer;
}

TEST(Demo, WithoutAModelSaysTheWeightsAreRandom) {
  const testing::CommandResult r =
      run_command("timeout 60 " + kCohortBinary + " demo --once --port 0 -n 16 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("RANDOM WEIGHTS"), std::string::npos) << r.out;
  expect_three_node_demo(r.out);
}

TEST(Demo, BadModelPathIsAClearError) {
  const testing::CommandResult r = run_command("timeout 30 " + kCohortBinary +
                                               " demo --once --port 0 -m /no/such/model.gguf 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("error: demo:"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace cohort
