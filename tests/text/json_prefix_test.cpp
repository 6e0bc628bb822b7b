// JsonPrefix accepts exactly the prefixes of JSON texts: every prefix of a valid document
// is accepted, a complete document is reported complete, and a byte that no JSON text could
// continue with is refused.
#include "text/json_prefix.h"

#include <gtest/gtest.h>

#include <string>

namespace cohort::text {
namespace {

// Feeds doc byte by byte; returns the index of the first refused byte, or -1.
int first_refused(const std::string& doc, bool object_only = false) {
  JsonPrefix p(object_only);
  for (size_t i = 0; i < doc.size(); ++i) {
    if (!p.feed(doc[i])) return static_cast<int>(i);
  }
  return -1;
}

bool complete(const std::string& doc, bool object_only = false) {
  JsonPrefix p(object_only);
  return p.feed(doc) && p.complete();
}

TEST(JsonPrefix, ValidDocumentsAreAcceptedAndComplete) {
  for (const std::string doc :
       {R"({})", R"([])", R"({"a": 1})", R"({"a": [1, 2.5, -3e+2, 0.0E1, true, false, null]})",
        R"("he said \"hi\" \\ \/ \b\f\n\r\t \u00e9")", R"([[[{"x": {"y": []}}]]])", "true",
        R"({"k":"v","k2":{"n":-0}} )", "\"caf\xc3\xa9\""}) {
    EXPECT_EQ(first_refused(doc), -1) << doc;
    EXPECT_TRUE(complete(doc)) << doc;
  }
}

TEST(JsonPrefix, PrefixesAreAcceptedButNotComplete) {
  const std::string doc = R"({"a": [1, {"b": "c"}], "d": null})";
  for (size_t n = 0; n < doc.size(); ++n) {
    JsonPrefix p;
    EXPECT_TRUE(p.feed(std::string_view(doc).substr(0, n))) << n;
    EXPECT_FALSE(p.complete()) << doc.substr(0, n);
  }
}

TEST(JsonPrefix, InvalidBytesAreRefusedWhereTheyOccur) {
  EXPECT_EQ(first_refused(R"({a)"), 1);        // keys are strings
  EXPECT_EQ(first_refused(R"({"a" 1)"), 5);    // a colon is needed
  EXPECT_EQ(first_refused(R"([1,])"), 3);      // no trailing comma
  EXPECT_EQ(first_refused(R"([01])"), 2);      // no leading zeros
  EXPECT_EQ(first_refused(R"([1.])"), 3);      // a digit after the point
  EXPECT_EQ(first_refused(R"("\x")"), 2);      // unknown escape
  EXPECT_EQ(first_refused(R"("\u12g")"), 5);   // four hex digits
  EXPECT_EQ(first_refused(R"(tru )"), 3);      // literals are exact
  EXPECT_EQ(first_refused(R"({"a":1]})"), 6);  // brackets must match
  EXPECT_EQ(first_refused(R"({} x)"), 3);      // nothing after the value
  EXPECT_EQ(first_refused("\"a\nb\""), 2);     // raw control characters in strings
  EXPECT_EQ(first_refused(R"([1}])"), 2);
}

TEST(JsonPrefix, StringsMustBeValidUtf8) {
  EXPECT_EQ(first_refused("\"\xb4\""), 1);                            // a lone continuation byte
  EXPECT_EQ(first_refused("\"\xc3\""), 2);                            // a character cut short
  EXPECT_EQ(first_refused("\"\xc0\xaf\""), 1);                        // overlong
  EXPECT_EQ(first_refused("\"\xed\xa0\x80\""), 2);                    // a surrogate
  EXPECT_EQ(first_refused("\"\xf4\x90\x80\x80\""), 2);                // above U+10FFFF
  EXPECT_EQ(first_refused("\"\xe2\x82\xac \xf0\x9f\x98\x80\""), -1);  // euro, emoji
  JsonPrefix p;
  EXPECT_TRUE(p.feed("\"\xe2\x82"));  // a prefix of a character is still a prefix
}

TEST(JsonPrefix, ObjectOnlyRefusesOtherTopLevelValues) {
  EXPECT_EQ(first_refused("[1]", true), 0);
  EXPECT_EQ(first_refused("\"s\"", true), 0);
  EXPECT_EQ(first_refused("  {\"a\": [1]}", true), -1);
  EXPECT_TRUE(complete("{\"a\": [1]}", true));
}

TEST(JsonPrefix, NumbersEndOnlyWhenSomethingFollows) {
  JsonPrefix p;
  ASSERT_TRUE(p.feed("12"));
  EXPECT_FALSE(p.complete());  // "123" could follow
  ASSERT_TRUE(p.feed(" "));
  EXPECT_TRUE(p.complete());
}

TEST(JsonPrefix, NestingAndWhitespaceAreBounded) {
  EXPECT_EQ(first_refused(std::string(JsonPrefix::kMaxDepth + 1, '[')), JsonPrefix::kMaxDepth);
  EXPECT_EQ(first_refused("{" + std::string(JsonPrefix::kMaxWhitespaceRun + 1, ' ')),
            JsonPrefix::kMaxWhitespaceRun + 1);
  // Whitespace inside strings is text, not indentation.
  EXPECT_EQ(first_refused("\"" + std::string(100, ' ') + "\""), -1);
}

}  // namespace
}  // namespace cohort::text
