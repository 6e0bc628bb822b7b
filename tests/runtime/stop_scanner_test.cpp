// StopScanner: text is released as soon as it cannot be part of a stop string, held back
// while it could, and cut before the first stop string even when it arrives split across
// pieces.
#include "runtime/stop_scanner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cohort::runtime {
namespace {

std::string feed(StopScanner& s, const std::vector<std::string>& pieces) {
  std::string out;
  for (const std::string& p : pieces) out += s.push(p);
  return out;
}

TEST(StopScanner, NoStopsReleasesEverythingAtOnce) {
  StopScanner s({});
  EXPECT_EQ(s.push("abc"), "abc");
  EXPECT_EQ(s.push("def"), "def");
  EXPECT_EQ(s.flush(), "");
  EXPECT_FALSE(s.matched());
  EXPECT_EQ(s.text(), "abcdef");
}

TEST(StopScanner, HoldsBackAPossiblePrefix) {
  StopScanner s({"END", ""});
  EXPECT_EQ(s.push("abcE"), "abc");
  EXPECT_EQ(s.push("N"), "");
  EXPECT_EQ(s.push("x"), "ENx");  // not a stop after all
  EXPECT_EQ(s.flush(), "");
  EXPECT_EQ(s.push("E"), "");
  EXPECT_EQ(s.flush(), "E");
  EXPECT_FALSE(s.matched());
}

TEST(StopScanner, MatchSplitAcrossPieces) {
  StopScanner s({"</s>", "\n\n"});
  EXPECT_EQ(feed(s, {"Hello <", "/", "s> more"}), "Hello ");
  EXPECT_TRUE(s.matched());
  EXPECT_EQ(s.matched_stop(), "</s>");
  EXPECT_EQ(s.text(), "Hello ");
  EXPECT_EQ(s.push("later"), "");
  EXPECT_EQ(s.flush(), "");
}

TEST(StopScanner, EarliestStopWins) {
  StopScanner s({"cd", "b"});
  EXPECT_EQ(s.push("abcd"), "a");
  EXPECT_EQ(s.matched_stop(), "b");
}

TEST(StopScanner, Utf8StaysWhole) {
  StopScanner s({"é!"});
  EXPECT_EQ(s.push("caf\xC3\xA9"), "caf");
  EXPECT_EQ(s.push("?"), "\xC3\xA9?");
}

}  // namespace
}  // namespace cohort::runtime
