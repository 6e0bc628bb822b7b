// SentencePiece tokenizer on small hand-made vocabularies (no files needed).
#include "text/spm_tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "core/rng.h"

namespace cohort::text {
namespace {

constexpr char kSp[] = "\xE2\x96\x81";  // "▁"

std::string sp(const std::string& s) {  // ' ' -> "▁"
  std::string r;
  for (char c : s) {
    if (c == ' ') {
      r += kSp;
    } else {
      r += c;
    }
  }
  return r;
}

// <unk>=0 <s>=1 </s>=2, <0x00>..<0xFF> = 3..258, then normal pieces with scores.
SpmVocab base_vocab(const std::vector<std::pair<std::string, float>>& normal) {
  SpmVocab v;
  v.name = "test";
  v.pieces = {"<unk>", "<s>", "</s>"};
  v.types = {TokenType::kUnknown, TokenType::kControl, TokenType::kControl};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
    v.pieces.emplace_back(buf);
    v.types.push_back(TokenType::kByte);
  }
  v.scores.assign(v.pieces.size(), 0.0f);
  for (const auto& [p, s] : normal) {
    v.pieces.push_back(sp(p));
    v.scores.push_back(s);
    v.types.push_back(TokenType::kNormal);
  }
  v.unk_id = 0;
  v.bos_id = 1;
  v.eos_id = 2;
  return v;
}

std::vector<std::pair<std::string, float>> hello_pieces() {
  return {{" ", -1},      {"h", -2},  {"e", -2},  {"l", -2},    {"o", -2},  {"w", -2},
          {"r", -2},      {"d", -2},  {" h", -5}, {" he", -6},  {"ll", -4}, {"llo", -6},
          {" hello", -7}, {" w", -5}, {"or", -5}, {" wor", -6}, {"ld", -5}, {" world", -7}};
}

std::unique_ptr<SpmTokenizer> make(SpmVocab v) {
  auto r = SpmTokenizer::create(std::move(v));
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return std::move(r).value();
}

int32_t spm_id_of(const SpmTokenizer& tok, const std::string& text) {
  const int32_t id = tok.find_piece(sp(text));
  EXPECT_GE(id, 0) << text;
  return id;
}

std::string decode_all(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += tok.token_to_piece(id);
  return s;
}

TEST(SpmTokenizer, MergesByScoreWithSpacePrefix) {
  auto tok = make(base_vocab(hello_pieces()));
  const std::vector<int32_t> want = {spm_id_of(*tok, " hello"), spm_id_of(*tok, " world")};
  EXPECT_EQ(tok->encode("hello world", false, false), want);
  std::vector<int32_t> with_bos = want;
  with_bos.insert(with_bos.begin(), 1);
  EXPECT_EQ(tok->encode("hello world", true, false), with_bos);
  EXPECT_EQ(decode_all(*tok, want), " hello world");
  EXPECT_EQ(tok->kind(), "llama");
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_id(), 2);
}

TEST(SpmTokenizer, NoSpacePrefixWhenDisabled) {
  SpmVocab v = base_vocab(hello_pieces());
  v.add_space_prefix = false;
  auto tok = make(std::move(v));
  const std::vector<int32_t> want = {spm_id_of(*tok, "h"), spm_id_of(*tok, "e"),
                                     spm_id_of(*tok, "llo"), spm_id_of(*tok, " world")};
  EXPECT_EQ(tok->encode("hello world", false, false), want);
}

TEST(SpmTokenizer, EqualScoresMergeLeftmostFirst) {
  SpmVocab v2 = base_vocab({{"a", -1}, {"b", -1}, {"c", -1}, {"ab", -3}, {"bc", -2}});
  v2.add_space_prefix = false;
  auto tok2 = make(std::move(v2));
  SpmVocab v1 = base_vocab({{"a", -1}, {"b", -1}, {"c", -1}, {"ab", -3}, {"bc", -3}});
  v1.add_space_prefix = false;
  auto tok1 = make(std::move(v1));
  EXPECT_EQ(tok1->encode("abc", false, false),
            (std::vector<int32_t>{spm_id_of(*tok1, "ab"), spm_id_of(*tok1, "c")}));
  EXPECT_EQ(tok2->encode("abc", false, false),
            (std::vector<int32_t>{spm_id_of(*tok2, "a"), spm_id_of(*tok2, "bc")}));
}

TEST(SpmTokenizer, ByteFallbackForCharactersNotInVocab) {
  auto tok = make(base_vocab(hello_pieces()));
  const std::string emoji = "\xF0\x9F\x98\x80";  // U+1F600
  const std::vector<int32_t> want = {spm_id_of(*tok, " "), 3 + 0xF0, 3 + 0x9F, 3 + 0x98, 3 + 0x80,
                                     spm_id_of(*tok, "h")};
  EXPECT_EQ(tok->encode(emoji + "h", false, false), want);
  EXPECT_EQ(decode_all(*tok, want), " " + emoji + "h");
}

TEST(SpmTokenizer, ByteFallbackWithoutByteTokensUsesUnknown) {
  SpmVocab v;
  v.name = "tiny";
  v.pieces = {"<unk>", sp(" "), "a"};
  v.types = {TokenType::kUnknown, TokenType::kNormal, TokenType::kNormal};
  v.unk_id = 0;
  auto tok = make(std::move(v));
  EXPECT_EQ(tok->encode("a\xC3\xA9", false, false), (std::vector<int32_t>{1, 2, 0, 0}));
  EXPECT_EQ(tok->token_to_piece(0), "");
  EXPECT_EQ(tok->token_to_piece(0, true), "<unk>");
}

TEST(SpmTokenizer, ParseSpecialSplitsControlTokens) {
  auto tok = make(base_vocab(hello_pieces()));
  const int32_t hello = spm_id_of(*tok, " hello");
  // Split out: the fragment after <s> gets the space prefix again, as llama.cpp does.
  EXPECT_EQ(tok->encode("<s>hello", false, true), (std::vector<int32_t>{1, hello}));
  EXPECT_EQ(tok->encode("hello</s><s>hello", false, true),
            (std::vector<int32_t>{hello, 2, 1, hello}));
  // Not parsed: "<s>" is plain text (bytes here), never id 1.
  const std::vector<int32_t> plain = tok->encode("<s>hello", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 1), 0);
  EXPECT_NE(std::find(plain.begin(), plain.end(), 3 + '<'), plain.end());
  EXPECT_EQ(decode_all(*tok, plain), " <s>hello");
}

TEST(SpmTokenizer, UserDefinedTokensAreAlwaysSplit) {
  SpmVocab v = base_vocab(hello_pieces());
  v.pieces.push_back("<|user|>");
  v.scores.push_back(0.0f);
  v.types.push_back(TokenType::kUserDefined);
  auto tok = make(std::move(v));
  const int32_t user = tok->n_vocab() - 1;
  const int32_t hello = spm_id_of(*tok, " hello");
  EXPECT_EQ(tok->encode("<|user|>hello", false, false), (std::vector<int32_t>{user, hello}));
  EXPECT_EQ(tok->token_to_piece(user), "<|user|>");
}

TEST(SpmTokenizer, LongestSpecialTextWins) {
  SpmVocab v = base_vocab(hello_pieces());
  v.pieces.insert(v.pieces.end(), {"<|a|>", "<|a|><|a|>"});
  v.scores.insert(v.scores.end(), {0.0f, 0.0f});
  v.types.insert(v.types.end(), {TokenType::kControl, TokenType::kControl});
  auto tok = make(std::move(v));
  const int32_t a = tok->n_vocab() - 2;
  const int32_t aa = tok->n_vocab() - 1;
  EXPECT_EQ(tok->encode("<|a|><|a|><|a|>", false, true), (std::vector<int32_t>{aa, a}));
}

TEST(SpmTokenizer, EmptyText) {
  auto tok = make(base_vocab(hello_pieces()));
  EXPECT_TRUE(tok->encode("", false, false).empty());
  EXPECT_TRUE(tok->encode("", false, true).empty());
  EXPECT_EQ(tok->encode("", true, false), (std::vector<int32_t>{1}));
}

TEST(SpmTokenizer, InvalidUtf8RoundTripsItsBytes) {
  auto tok = make(base_vocab(hello_pieces()));
  const std::string inputs[] = {"\xFF\xFE\x61\x62\x80", "\x80", "\xE2\x96", "h\xC3", "\xF0\x9F\x98",
                                std::string("a\0b", 3)};
  for (const std::string& in : inputs) {
    const std::vector<int32_t> ids = tok->encode(in, false, false);
    EXPECT_EQ(decode_all(*tok, ids), " " + in);
  }
}

TEST(SpmTokenizer, TokenToPieceByType) {
  auto tok = make(base_vocab(hello_pieces()));
  EXPECT_EQ(tok->token_to_piece(1), "");
  EXPECT_EQ(tok->token_to_piece(1, true), "<s>");
  EXPECT_EQ(tok->token_to_piece(3 + 'A'), "A");
  EXPECT_EQ(tok->token_to_piece(3 + 0xFF), "\xFF");
  EXPECT_EQ(tok->token_to_piece(spm_id_of(*tok, " hello")), " hello");
  EXPECT_EQ(tok->token_to_piece(-1), "");
  EXPECT_EQ(tok->token_to_piece(tok->n_vocab()), "");
}

TEST(SpmTokenizer, EndOfGeneration) {
  SpmVocab v = base_vocab(hello_pieces());
  v.pieces.push_back("<|end|>");
  v.scores.push_back(0.0f);
  v.types.push_back(TokenType::kUserDefined);
  auto tok = make(std::move(v));
  const int32_t end = tok->n_vocab() - 1;
  EXPECT_TRUE(tok->is_eog(2));
  EXPECT_TRUE(tok->is_eog(end));  // a well-known end text becomes a control token
  EXPECT_EQ(tok->token_type(end), TokenType::kControl);
  EXPECT_FALSE(tok->is_eog(1));
  EXPECT_FALSE(tok->is_eog(-1));
}

TEST(Detokenizer, HoldsBackPartialUtf8) {
  auto tok = make(base_vocab(hello_pieces()));
  Detokenizer d(*tok);
  EXPECT_EQ(d.push(spm_id_of(*tok, " hello")), " hello");
  EXPECT_EQ(d.push(3 + 0xF0), "");
  EXPECT_EQ(d.push(3 + 0x9F), "");
  EXPECT_EQ(d.push(3 + 0x98), "");
  EXPECT_EQ(d.push(3 + 0x80), "\xF0\x9F\x98\x80");
  EXPECT_EQ(d.push(1), "");  // control: nothing
  EXPECT_EQ(d.push(3 + 0xE2), "");
  EXPECT_EQ(d.push(3 + 0x96), "");
  EXPECT_EQ(d.flush(), "\xE2\x96");  // the unfinished rest comes out on flush
  EXPECT_EQ(d.flush(), "");
  // A lead byte followed by a non-continuation byte is invalid: passed through at once.
  EXPECT_EQ(d.push(3 + 0xC3), "");
  EXPECT_EQ(d.push(3 + 'a'), "\xC3\x61");
}

TEST(SpmTokenizer, RejectsBadVocabularies) {
  {
    SpmVocab v = base_vocab(hello_pieces());
    v.scores.pop_back();
    auto r = SpmTokenizer::create(std::move(v));
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("scores for"), std::string::npos) << r.status().message();
  }
  {
    SpmVocab v = base_vocab(hello_pieces());
    v.types.push_back(TokenType::kNormal);
    EXPECT_FALSE(SpmTokenizer::create(std::move(v)).is_ok());
  }
  {
    SpmVocab v = base_vocab(hello_pieces());
    v.bos_id = static_cast<int32_t>(v.pieces.size());
    auto r = SpmTokenizer::create(std::move(v));
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
    EXPECT_NE(r.status().message().find("bos"), std::string::npos) << r.status().message();
  }
  {
    SpmVocab v = base_vocab(hello_pieces());
    v.pieces[3] = "<0xZZ>";
    EXPECT_FALSE(SpmTokenizer::create(std::move(v)).is_ok());
  }
  {
    SpmVocab v = base_vocab(hello_pieces());
    v.types[5] = static_cast<TokenType>(9);
    EXPECT_FALSE(SpmTokenizer::create(std::move(v)).is_ok());
  }
  {
    SpmVocab v = base_vocab(hello_pieces());
    v.scores[270] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_FALSE(SpmTokenizer::create(std::move(v)).is_ok());
  }
  EXPECT_FALSE(SpmTokenizer::create(SpmVocab{}).is_ok());
}

// Straightforward O(n^2) statement of the merge rule, to check the queue-based one against.
std::vector<int32_t> naive_encode(const SpmTokenizer& tok, const std::string& text) {
  std::vector<std::string> syms;
  for (char c : text) syms.emplace_back(1, c);  // the test alphabet is ASCII
  while (true) {
    int best = -1;
    float best_score = 0;
    for (size_t i = 0; i + 1 < syms.size(); ++i) {
      const int32_t id = tok.find_piece(syms[i] + syms[i + 1]);
      if (id < 0) continue;
      const float s = tok.score(id);
      if (best < 0 || s > best_score) {
        best = static_cast<int>(i);
        best_score = s;
      }
    }
    if (best < 0) break;
    syms[best] += syms[best + 1];
    syms.erase(syms.begin() + best + 1);
  }
  std::vector<int32_t> out;
  for (const std::string& s : syms) {
    const int32_t id = tok.find_piece(s);
    if (id >= 0) {
      out.push_back(id);
    } else {
      for (unsigned char c : s) out.push_back(3 + c);
    }
  }
  return out;
}

TEST(SpmTokenizer, MatchesNaiveMergeOnRandomInputs) {
  Rng rng(7);
  const std::string alphabet = "abcd";
  std::vector<std::pair<std::string, float>> pieces;
  for (int i = 0; i < 60; ++i) {
    std::string p;
    const int len = 1 + static_cast<int>(rng.next_u64() % 4);
    for (int j = 0; j < len; ++j) p += alphabet[rng.next_u64() % alphabet.size()];
    // Coarse scores so that ties happen.
    pieces.emplace_back(p, -static_cast<float>(rng.next_u64() % 5));
  }
  SpmVocab v = base_vocab(pieces);
  v.add_space_prefix = false;
  auto tok = make(std::move(v));
  for (int t = 0; t < 300; ++t) {
    std::string text;
    const int len = static_cast<int>(rng.next_u64() % 40);
    for (int j = 0; j < len; ++j) text += alphabet[rng.next_u64() % alphabet.size()];
    ASSERT_EQ(tok->encode(text, false, false), naive_encode(*tok, text)) << text;
  }
}

}  // namespace
}  // namespace cohort::text
