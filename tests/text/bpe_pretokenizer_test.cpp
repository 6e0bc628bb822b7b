// The PCRE2 pre-tokenizer splits of each tokenizer.ggml.pre family on hand-picked strings:
// digit groups, contractions, whitespace runs, CJK, emoji, invalid UTF-8, and the
// sequential multi-pattern families (deepseek-*, default).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "text/pretokenizer.h"

namespace cohort::text {
namespace {

using Pieces = std::vector<std::string>;

Pieces split(std::string_view pre, std::string_view text) {
  auto p = PreTokenizer::for_name(pre, "test");
  EXPECT_TRUE(p.is_ok()) << p.status().message();
  if (!p.is_ok()) return {};
  Pieces out;
  for (std::string_view s : (*p)->split(text)) out.emplace_back(s);
  return out;
}

TEST(PreTokenizer, Llama3DigitsContractionsWhitespace) {
  EXPECT_EQ(split("llama-bpe", "12345678"), (Pieces{"123", "456", "78"}));
  EXPECT_EQ(split("llama-bpe", "I'm here"), (Pieces{"I", "'m", " here"}));
  EXPECT_EQ(split("llama-bpe", "HELLO'S"), (Pieces{"HELLO", "'S"}));  // (?i:'s)
  EXPECT_EQ(split("llama-bpe", "a   b"), (Pieces{"a", "  ", " b"}));
  EXPECT_EQ(split("llama-bpe", "hello\n\nworld"), (Pieces{"hello", "\n\n", "world"}));
  EXPECT_EQ(split("llama-bpe", " 123"), (Pieces{" ", "123"}));
  EXPECT_EQ(split("llama-bpe", "x  "), (Pieces{"x", "  "}));
  EXPECT_EQ(split("llama-bpe", "(a+b)"), (Pieces{"(a", "+b", ")"}));
  // CJK letters form one run; an emoji with its skin-tone modifier is one symbol run.
  EXPECT_EQ(split("llama-bpe", "\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C"),
            (Pieces{"\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C"}));
  EXPECT_EQ(split("llama-bpe", "x \xF0\x9F\x91\x8B\xF0\x9F\x8F\xBD!"),
            (Pieces{"x", " \xF0\x9F\x91\x8B\xF0\x9F\x8F\xBD!"}));
  // Aliases select the same family.
  EXPECT_EQ(split("llama3", "12345678"), split("smaug-bpe", "12345678"));
}

TEST(PreTokenizer, Gpt2) {
  EXPECT_EQ(split("gpt-2", "I'm"), (Pieces{"I", "'m"}));
  EXPECT_EQ(split("gpt-2", "HELLO'S"), (Pieces{"HELLO", "'", "S"}));  // case-sensitive
  EXPECT_EQ(split("gpt-2", "123456"), (Pieces{"123456"}));
  EXPECT_EQ(split("gpt-2", " 123"), (Pieces{" 123"}));
  EXPECT_EQ(split("gpt-2", "a   b"), (Pieces{"a", "  ", " b"}));
  EXPECT_EQ(split("gpt-2", "Hello, world!"), (Pieces{"Hello", ",", " world", "!"}));
  EXPECT_EQ(split("gpt-2", "a\n\tb"), (Pieces{"a", "\n", "\t", "b"}));
}

TEST(PreTokenizer, Qwen2AndStarcoderSplitSingleDigits) {
  EXPECT_EQ(split("qwen2", "12345"), (Pieces{"1", "2", "3", "4", "5"}));
  EXPECT_EQ(split("qwen2", "I'm 42"), (Pieces{"I", "'m", " ", "4", "2"}));
  EXPECT_EQ(split("starcoder", "x 42"), (Pieces{"x", " ", "4", "2"}));
  EXPECT_EQ(split("command-r", "x 42"), split("starcoder", "x 42"));
}

TEST(PreTokenizer, DeepseekSequentialPatterns) {
  EXPECT_EQ(split("deepseek-coder", "Hi 123!\n"), (Pieces{"Hi", " ", "1", "2", "3", "!", "\n"}));
  // deepseek-llm: letters, then CJK runs, then digit runs.
  EXPECT_EQ(split("deepseek-llm", "Hello \xE4\xB8\x96\xE7\x95\x8C 42"),
            (Pieces{"Hello", " ", "\xE4\xB8\x96\xE7\x95\x8C", " ", "42"}));
  EXPECT_EQ(split("deepseek-llm", "a \n"), (Pieces{"a", " ", "\n"}));
  EXPECT_EQ(split("deepseek-v3", "12345 ok"), (Pieces{"123", "45", " ok"}));
}

TEST(PreTokenizer, DefaultSplitsPunctuationThenDigitGroups) {
  EXPECT_EQ(split("default", "Hello, world!!! 12345"),
            (Pieces{"Hello", ",", " world", "!!!", " ", "123", "45"}));
  EXPECT_EQ(split("", "a, b"), split("default", "a, b"));
}

TEST(PreTokenizer, TekkenAndGpt4oSplitCaseRuns) {
  EXPECT_EQ(split("tekken", "HelloWorld"), (Pieces{"Hello", "World"}));
  EXPECT_EQ(split("tekken", "ABCdef 12"), (Pieces{"ABCdef", " ", "1", "2"}));
  EXPECT_EQ(split("gpt-4o", "HelloWorld's 12345"), (Pieces{"Hello", "World's", " ", "123", "45"}));
}

TEST(PreTokenizer, NextLineCountsAsWhitespace) {
  // U+0085 is whitespace for the engines the patterns come from; PCRE2 alone would
  // group it with the symbols.
  EXPECT_EQ(split("llama-bpe",
                  "a\xC2\x85\xC2\x85"
                  "b"),
            (Pieces{"a", "\xC2\x85",
                    "\xC2\x85"
                    "b"}));
}

TEST(PreTokenizer, InvalidUtf8BytesAreOwnPieces) {
  EXPECT_EQ(split("llama-bpe",
                  "ab\xFF"
                  "cd"),
            (Pieces{"ab", "\xFF", "cd"}));
  EXPECT_EQ(split("llama-bpe", "x\xC3"), (Pieces{"x", "\xC3"}));
  EXPECT_EQ(split("gpt-2", "\xE2\x82"), (Pieces{"\xE2", "\x82"}));
  EXPECT_EQ(split("gpt-2", "\xED\xA0\x80"), (Pieces{"\xED", "\xA0", "\x80"}));  // surrogate
  EXPECT_EQ(split("gpt-2", "\xC0\xAF"), (Pieces{"\xC0", "\xAF"}));              // overlong
  EXPECT_EQ(split("gpt-2", std::string("a\0b", 3)), (Pieces{"a", std::string(1, '\0'), "b"}));
  EXPECT_TRUE(split("gpt-2", "").empty());
}

TEST(PreTokenizer, EveryKnownNameLoadsAndCoversItsInput) {
  const char* const kNames[] = {"default",
                                "llama3",
                                "llama-v3",
                                "llama-bpe",
                                "falcon3",
                                "falcon-h1",
                                "pixtral",
                                "midm-2.0",
                                "lfm2",
                                "dbrx",
                                "smaug-bpe",
                                "chatglm-bpe",
                                "glm4",
                                "deepseek-llm",
                                "deepseek-coder",
                                "deepseek-v3",
                                "hunyuan-dense",
                                "falcon",
                                "gpt-2",
                                "phi-2",
                                "jina-es",
                                "jina-de",
                                "gigachat",
                                "jina-v2-es",
                                "jina-v2-de",
                                "jina-v1-en",
                                "jina-v2-code",
                                "roberta-bpe",
                                "mpt",
                                "olmo",
                                "jais",
                                "trillion",
                                "a.x-4.0",
                                "mellum",
                                "starcoder",
                                "refact",
                                "command-r",
                                "smollm",
                                "codeshell",
                                "exaone",
                                "minerva-7b",
                                "qwen2",
                                "deepseek-r1-qwen",
                                "stablelm2",
                                "hunyuan",
                                "megrez",
                                "poro-chat",
                                "bloom",
                                "gpt3-finnish",
                                "viking",
                                "tekken",
                                "gpt-4o",
                                "llama4",
                                "minimax-m2",
                                "seed-coder",
                                "bailingmoe",
                                "llada-moe"};
  const std::string sample =
      "Hello WORLD's 1234567 \t\n\n  x\xC2\xA0y, \xE4\xBD\xA0\xE5\xA5\xBD! \xF0\x9F\xA6\x99 "
      "caf\xC3\xA9 \xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 \xFF\xC3 end   ";
  for (const char* name : kNames) {
    SCOPED_TRACE(name);
    ASSERT_NE(find_pre_tokenizer_family(name), nullptr);
    ::testing::internal::CaptureStderr();
    auto p = PreTokenizer::for_name(name, "test");
    const std::string err = ::testing::internal::GetCapturedStderr();
    ASSERT_TRUE(p.is_ok()) << p.status().message();
    EXPECT_EQ(err, "");
    std::string joined;
    for (std::string_view s : (*p)->split(sample)) {
      EXPECT_FALSE(s.empty());
      joined += s;
    }
    EXPECT_EQ(joined, sample);
  }
}

TEST(PreTokenizer, UnknownNameWarnsAndUsesDefault) {
  EXPECT_EQ(find_pre_tokenizer_family("no-such-family"), nullptr);
  ::testing::internal::CaptureStderr();
  auto p = PreTokenizer::for_name("no-such-family", "model.gguf");
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ((*p)->name(), "default");
  EXPECT_NE(err.find("model.gguf: unknown pre-tokenizer 'no-such-family'"), std::string::npos)
      << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1);  // one warning line
}

TEST(PreTokenizer, BadPatternIsAnError) {
  auto p = PreTokenizer::from_patterns("bad", {"(unclosed"});
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("(unclosed"), std::string::npos) << p.status().message();
}

TEST(PreTokenizer, EmptyMatchesDoNotLoop) {
  auto p = PreTokenizer::from_patterns("empty", {"x*"});
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  Pieces out;
  for (std::string_view s : (*p)->split("abxxc")) out.emplace_back(s);
  EXPECT_EQ(out, (Pieces{"ab", "xx", "c"}));
}

TEST(PreTokenizer, SplitsConcurrently) {
  auto p = PreTokenizer::for_name("llama-bpe", "test");
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  const std::string text = "The year 2024 had 366 days, didn't it? \xE4\xBD\xA0\xE5\xA5\xBD ";
  const std::vector<std::string_view> want = (*p)->split(text);
  std::vector<int> ok(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      int good = 0;
      for (int i = 0; i < 200; ++i) good += (*p)->split(text) == want;
      ok[t] = good;
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(ok[t], 200);
}

}  // namespace
}  // namespace cohort::text
