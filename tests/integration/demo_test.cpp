// `cohort demo --once`: a head and 2 workers on loopback, one chat answer streamed, tok/s,
// the placement over 3 nodes and the dashboard URL; with no -m, a synthetic model whose
// output says it has random weights.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "support/shared_data.h"
#include "support/subprocess.h"

namespace cohort {
namespace {

using testing::run_command;

const std::string kBin = COHORT_BINARY;

void expect_three_node_demo(const std::string& out) {
  EXPECT_NE(out.find("placement ("), std::string::npos) << out;
  EXPECT_NE(out.find("3 nodes"), std::string::npos) << out;
  for (const char* node : {"head ", "worker0 ", "worker1 "}) {
    EXPECT_NE(out.find(std::string("  ") + node), std::string::npos) << node << "\n" << out;
  }
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(\d+ tokens in [\d.]+ s: [\d.]+ tok/s)"))) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(dashboard: http://127\.0\.0\.1:\d+/)"))) << out;
}

TEST(Demo, OnceWithStories260KStreamsAnAnswerOnThreeNodes) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  const testing::CommandResult r =
      run_command("timeout 60 " + kBin + " demo --once --port 0 -n 48 -m " + testing::kSharedData +
                  "/models/stories260K.gguf 2>&1");
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
  EXPECT_TRUE(std::regex_search(answer, std::regex("[A-Za-z]{3,}"))) << "no words: " << answer;
}

TEST(Demo, WithoutAModelSaysTheWeightsAreRandom) {
  const testing::CommandResult r =
      run_command("timeout 60 " + kBin + " demo --once --port 0 -n 16 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("RANDOM WEIGHTS"), std::string::npos) << r.out;
  expect_three_node_demo(r.out);
}

TEST(Demo, BadModelPathIsAClearError) {
  const testing::CommandResult r =
      run_command("timeout 30 " + kBin + " demo --once --port 0 -m /no/such/model.gguf 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("error: demo:"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace cohort
