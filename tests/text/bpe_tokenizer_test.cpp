// Byte-level BPE ("gpt2") tokenizers: llama.cpp's test vectors for every BPE vocabulary in
// the shared data, special tokens, streaming decode, and small hand-made vocabularies that
// exercise merges, ignore_merges and every validation error.
//
// Not runnable here: the expected-only sets in ../shared/data/vocab/expected-only
// (llama-bpe = Llama 3, qwen2, command-r) have no vocabulary file (each is 4 MiB or more and
// is not included), so nothing can tokenize them; pair them with a real model GGUF of that
// family to run them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "format/gguf.h"
#include "format/gguf_writer.h"
#include "support/shared_data.h"
#include "support/vocab_vectors.h"
#include "text/bpe_tokenizer.h"
#include "text/tokenizer.h"

namespace cohort::text {
namespace {

const std::string kVocabDir = testing::kSharedData + "/vocab/";

// The tokenizer of a shared vocab file, or nullptr (with a test failure when the file is
// there but does not load).
std::unique_ptr<Tokenizer> load_vocab(const std::string& name) {
  auto file = format::GgufFile::open(kVocabDir + name);
  if (!file.is_ok()) {
    ADD_FAILURE() << file.status().message();
    return nullptr;
  }
  auto tok = Tokenizer::from_gguf(*file);
  if (!tok.is_ok()) {
    ADD_FAILURE() << tok.status().message();
    return nullptr;
  }
  return std::move(tok).value();
}

#define COHORT_VOCAB_OR_SKIP(var, name)                                                         \
  if (!std::filesystem::exists(kVocabDir + (name))) GTEST_SKIP() << "no test data: " << (name); \
  const std::unique_ptr<Tokenizer> var = load_vocab(name);                                      \
  ASSERT_NE(var, nullptr)

std::string decode(const Tokenizer& t, const std::vector<int32_t>& ids, bool special = false) {
  std::string s;
  for (int32_t id : ids) s += t.token_to_piece(id, special);
  return s;
}

void check_vectors(const std::string& vocab, const std::string& pre) {
  COHORT_VOCAB_OR_SKIP(tok, vocab);
  EXPECT_EQ(tok->kind(), "gpt2");
  EXPECT_EQ(static_cast<const BpeTokenizer&>(*tok).pre_tokenizer().name(), pre);
  testing::VocabVectors v;
  std::string error;
  ASSERT_TRUE(testing::load_vocab_vectors(kVocabDir + vocab, &v, &error)) << error;
  ASSERT_EQ(v.texts.size(), 46u);
  int passed = 0;
  for (size_t i = 0; i < v.texts.size(); ++i) {
    const std::vector<int32_t> got = tok->encode(v.texts[i], false, false);
    EXPECT_EQ(got, v.ids[i]) << vocab << " case " << i << ": '" << v.texts[i] << "'";
    passed += got == v.ids[i];
    // Byte-level BPE has no dummy prefix: the pieces give back the text exactly.
    EXPECT_EQ(decode(*tok, got), v.texts[i]) << vocab << " case " << i;
  }
  std::printf("[ vectors  ] %s: %d/%zu cases pass\n", vocab.c_str(), passed, v.texts.size());
}

TEST(BpeVectors, Gpt2) { check_vectors("ggml-vocab-gpt-2.gguf", "gpt2"); }
TEST(BpeVectors, DeepseekCoder) {
  check_vectors("ggml-vocab-deepseek-coder.gguf", "deepseek-coder");
}
TEST(BpeVectors, DeepseekLlm) { check_vectors("ggml-vocab-deepseek-llm.gguf", "deepseek-llm"); }

TEST(BpeGguf, Gpt2SpecialTokensAndDefaults) {
  COHORT_VOCAB_OR_SKIP(tok, "ggml-vocab-gpt-2.gguf");
  EXPECT_EQ(tok->n_vocab(), 50257);
  EXPECT_EQ(tok->bos_id(), 50256);
  EXPECT_EQ(tok->eos_id(), 50256);
  EXPECT_TRUE(tok->is_eog(50256));
  EXPECT_FALSE(tok->add_bos_default());  // gpt-2 has no add_bos_token key: the family default
  EXPECT_EQ(tok->encode("Hello world", false, false), (std::vector<int32_t>{15496, 995}));
  // <|endoftext|> is a control token: one id only with parse_special.
  EXPECT_EQ(tok->encode("a<|endoftext|>b", false, true), (std::vector<int32_t>{64, 50256, 65}));
  const std::vector<int32_t> plain = tok->encode("a<|endoftext|>b", false, false);
  EXPECT_GT(plain.size(), 3u);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 50256), 0);
  EXPECT_EQ(decode(*tok, plain), "a<|endoftext|>b");
  // Control tokens render only when asked.
  EXPECT_EQ(tok->token_to_piece(50256), "");
  EXPECT_EQ(tok->token_to_piece(50256, true), "<|endoftext|>");
  EXPECT_EQ(tok->token_to_piece(-1), "");
  EXPECT_EQ(tok->token_to_piece(50257), "");
}

TEST(BpeGguf, DeepseekUserDefinedTokensAlwaysSplit) {
  COHORT_VOCAB_OR_SKIP(tok, "ggml-vocab-deepseek-coder.gguf");
  EXPECT_TRUE(tok->add_bos_default());
  EXPECT_EQ(tok->bos_id(), 32013);
  EXPECT_TRUE(tok->is_eog(32014));  // <｜end▁of▁sentence｜>
  // "<|User|>" is user-defined: split out even without parse_special, rendered as is.
  const std::vector<int32_t> ids = tok->encode("<|User|>hi", true, false);
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(ids[0], 32013);
  EXPECT_EQ(ids[1], 32019);
  EXPECT_EQ(decode(*tok, ids), "<|User|>hi");
  // The BOS text is a control token: plain text unless parse_special.
  const std::string bos_text = tok->piece(32013);
  EXPECT_EQ(tok->encode(bos_text, false, true), (std::vector<int32_t>{32013}));
  EXPECT_GT(tok->encode(bos_text, false, false).size(), 1u);
}

TEST(BpeGguf, DetokenizerHoldsBackPartialUtf8) {
  COHORT_VOCAB_OR_SKIP(tok, "ggml-vocab-gpt-2.gguf");
  const std::string text =
      "\xF0\x9F\xA6\x99 caf\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD";  // 🦙 café 你好
  const std::vector<int32_t> ids = tok->encode(text, false, false);
  ASSERT_GT(ids.size(), 4u);
  Detokenizer d(*tok);
  std::string streamed;
  bool held_back = false;
  for (int32_t id : ids) {
    const std::string piece = d.push(id);
    // Nothing emitted may end inside a character.
    if (!piece.empty()) {
      const auto last = static_cast<uint8_t>(piece.back());
      EXPECT_TRUE(last < 0x80 || (last & 0xC0) == 0x80) << "emitted a partial character";
    }
    held_back |= piece.size() < tok->token_to_piece(id).size();
    streamed += piece;
  }
  streamed += d.flush();
  EXPECT_EQ(streamed, text);
  EXPECT_TRUE(held_back);  // the emoji spans several byte tokens in GPT-2's vocabulary
}

TEST(BpeBytes, Gpt2ByteTable) {
  EXPECT_EQ(byte_to_codepoint('A'), uint32_t{'A'});
  EXPECT_EQ(byte_to_codepoint(' '), 0x120u);
  EXPECT_EQ(byte_to_codepoint('\n'), 0x10Au);
  EXPECT_EQ(byte_to_codepoint(0x00), 0x100u);
  EXPECT_EQ(byte_to_codepoint(0xAD), 0x143u);  // the last of the 68 remapped bytes
  EXPECT_EQ(byte_to_codepoint(0xFF), 0xFFu);
  for (int b = 0; b < 256; ++b) {
    EXPECT_EQ(codepoint_to_byte(byte_to_codepoint(static_cast<uint8_t>(b))), b);
  }
  EXPECT_EQ(codepoint_to_byte(0x20), -1);  // a raw space is not in the table
  EXPECT_EQ(codepoint_to_byte(0x144), -1);
  EXPECT_EQ(codepoint_to_byte(0x10FFFF), -1);
}

// A byte-level vocabulary: the 256 byte symbols, then the given extra tokens.
BpeVocab byte_vocab(const std::vector<std::string>& extra, std::vector<std::string> merges,
                    std::string pre = "gpt-2") {
  BpeVocab v;
  v.name = "test";
  for (int b = 0; b < 256; ++b) {
    const uint32_t cp = byte_to_codepoint(static_cast<uint8_t>(b));
    std::string s;
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    v.pieces.push_back(s);
  }
  for (const std::string& e : extra) v.pieces.push_back(e);
  v.merges = std::move(merges);
  v.pre = std::move(pre);
  return v;
}

int32_t id_of(const BpeTokenizer& t, const std::string& piece) { return t.find_piece(piece); }

TEST(BpeMerges, LowestRankFirstAndLeftmostOnTies) {
  // "ab" merges before "bc" (lower rank): "abc" -> "ab" + "c".
  auto t = BpeTokenizer::create(byte_vocab({"ab", "bc", "abc"}, {"a b", "b c", "ab c"}));
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  const BpeTokenizer& tok = **t;
  EXPECT_EQ(tok.encode("abc", false, false), (std::vector<int32_t>{id_of(tok, "abc")}));
  EXPECT_EQ(tok.encode("bc", false, false), (std::vector<int32_t>{id_of(tok, "bc")}));
  // "aaa" with "a a": the leftmost pair merges first -> "aa" + "a".
  auto t2 = BpeTokenizer::create(byte_vocab({"aa"}, {"a a"}));
  ASSERT_TRUE(t2.is_ok()) << t2.status().message();
  EXPECT_EQ((*t2)->encode("aaa", false, false),
            (std::vector<int32_t>{id_of(**t2, "aa"), id_of(**t2, "a")}));
  // Spaces are byte-encoded ("Ġ" = U+0120) before merging.
  auto t3 = BpeTokenizer::create(byte_vocab({"\xC4\xA0x"}, {"\xC4\xA0 x"}));
  ASSERT_TRUE(t3.is_ok()) << t3.status().message();
  EXPECT_EQ((*t3)->encode("x x", false, false),
            (std::vector<int32_t>{id_of(**t3, "x"), id_of(**t3, "\xC4\xA0x")}));
  EXPECT_EQ((*t3)->token_to_piece(id_of(**t3, "\xC4\xA0x")), " x");
}

TEST(BpeMerges, IgnoreMergesTakesWholeVocabularyWords) {
  // No merge reaches "abc", but llama3-style families take a whole-word match as is.
  auto gpt2 = BpeTokenizer::create(byte_vocab({"abc"}, {}, "gpt-2"));
  ASSERT_TRUE(gpt2.is_ok()) << gpt2.status().message();
  EXPECT_EQ((*gpt2)->encode("abc", false, false).size(), 3u);
  auto llama3 = BpeTokenizer::create(byte_vocab({"abc"}, {}, "llama-bpe"));
  ASSERT_TRUE(llama3.is_ok()) << llama3.status().message();
  EXPECT_EQ((*llama3)->encode("abc", false, false), (std::vector<int32_t>{id_of(**llama3, "abc")}));
  EXPECT_TRUE((*llama3)->add_bos_default());  // llama3's default without add_bos_token
}

TEST(BpeMerges, MissingByteTokensUseUnknownOrDrop) {
  BpeVocab v;
  v.name = "test";
  v.pieces = {"<unk>", "a", "b"};
  v.types = {TokenType::kUnknown, TokenType::kNormal, TokenType::kNormal};
  auto no_unk = BpeTokenizer::create(v);
  ASSERT_TRUE(no_unk.is_ok()) << no_unk.status().message();
  EXPECT_EQ((*no_unk)->encode("a?b", false, false), (std::vector<int32_t>{1, 2}));
  v.unk_id = 0;
  auto with_unk = BpeTokenizer::create(v);
  ASSERT_TRUE(with_unk.is_ok()) << with_unk.status().message();
  EXPECT_EQ((*with_unk)->encode("a?b", false, false), (std::vector<int32_t>{1, 0, 2}));
  // <unk> in the text is a special token only with parse_special.
  EXPECT_EQ((*with_unk)->encode("<unk>", false, true), (std::vector<int32_t>{0}));
}

TEST(BpeMerges, SpecialTokensLongestFirst) {
  BpeVocab v = byte_vocab({"<a>", "<a><b>", "<b>"}, {});
  v.types.assign(v.pieces.size(), TokenType::kNormal);
  v.types[256] = TokenType::kControl;
  v.types[257] = TokenType::kControl;
  v.types[258] = TokenType::kUserDefined;
  auto t = BpeTokenizer::create(v);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ((*t)->encode("x<a><b><a>", false, true),
            (std::vector<int32_t>{id_of(**t, "x"), 257, 256}));
  // Without parse_special only the user-defined "<b>" is split out.
  const std::vector<int32_t> ids = (*t)->encode("<a><b>", false, false);
  EXPECT_EQ(ids.back(), 258);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 256), 0);
  EXPECT_EQ(decode(**t, ids), "<a><b>");
}

TEST(BpeValidation, BadVocabulariesAreErrors) {
  auto code_of = [](BpeVocab v) {
    auto t = BpeTokenizer::create(std::move(v));
    return t.is_ok() ? StatusCode::kOk : t.status().code();
  };
  auto message_of = [](BpeVocab v) {
    auto t = BpeTokenizer::create(std::move(v));
    return t.is_ok() ? std::string("ok") : t.status().message();
  };
  EXPECT_EQ(code_of(byte_vocab({"ab"}, {"a b"})), StatusCode::kOk);
  EXPECT_NE(message_of(byte_vocab({"ab"}, {"ab"})).find("not two tokens"), std::string::npos);
  EXPECT_NE(message_of(byte_vocab({"ab"}, {"a "})).find("not two tokens"), std::string::npos);
  EXPECT_NE(message_of(byte_vocab({"ab"}, {""})).find("not two tokens"), std::string::npos);
  EXPECT_NE(message_of(byte_vocab({"xy"}, {"zz b"})).find("first part"), std::string::npos);
  EXPECT_NE(message_of(byte_vocab({"xy"}, {"a xy z"})).find("second part"), std::string::npos);
  EXPECT_NE(message_of(byte_vocab({}, {"a b"})).find("not in the vocabulary"), std::string::npos);
  BpeVocab empty;
  empty.name = "test";
  EXPECT_EQ(code_of(empty), StatusCode::kCorrupt);
  BpeVocab types = byte_vocab({}, {});
  types.types.assign(3, TokenType::kNormal);
  EXPECT_EQ(code_of(types), StatusCode::kCorrupt);
  BpeVocab bad_type = byte_vocab({}, {});
  bad_type.types.assign(bad_type.pieces.size(), TokenType::kNormal);
  bad_type.types[5] = static_cast<TokenType>(9);
  EXPECT_EQ(code_of(bad_type), StatusCode::kCorrupt);
  BpeVocab bad_id = byte_vocab({}, {});
  bad_id.eot_id = 256;
  EXPECT_NE(message_of(bad_id).find("eot token id 256"), std::string::npos);
  BpeVocab bad_pad = byte_vocab({}, {});
  bad_pad.pad_id = -7;
  EXPECT_EQ(code_of(bad_pad), StatusCode::kCorrupt);
}

// The same checks through a GGUF file, as real models arrive.
class BpeGgufErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("cohort_bpe_test_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".gguf"))
                .string();
  }
  void TearDown() override { std::remove(path_.c_str()); }

  // A small byte-level vocabulary; edit() changes the writer before the file is written.
  Result<std::unique_ptr<Tokenizer>> load(const std::function<void(format::GgufWriter&)>& edit) {
    format::GgufWriter w;
    w.set_string("general.architecture", "gpt2");
    w.set_string("tokenizer.ggml.model", "gpt2");
    w.set_string("tokenizer.ggml.pre", "gpt-2");
    BpeVocab v = byte_vocab({"ab", "<|endoftext|>"}, {"a b"});
    w.set_strings("tokenizer.ggml.tokens", v.pieces);
    std::vector<int32_t> types(v.pieces.size(), 1);
    types.back() = 3;
    w.set_i32s("tokenizer.ggml.token_type", types);
    if (with_merges_) w.set_strings("tokenizer.ggml.merges", v.merges);
    w.set_u32("tokenizer.ggml.eos_token_id", 257);
    edit(w);
    const Status st = w.write_file(path_);
    if (!st.is_ok()) return st;
    auto file = format::GgufFile::open(path_);
    if (!file.is_ok()) return file.status();
    return Tokenizer::from_gguf(*file);
  }

  std::string path_;
  bool with_merges_ = true;
};

TEST_F(BpeGgufErrors, ValidFileLoads) {
  auto t = load([](format::GgufWriter&) {});
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ((*t)->encode("ab", false, false), (std::vector<int32_t>{256}));
  EXPECT_EQ((*t)->bos_id(), -1);  // no bos key: none (not llama.cpp's 11)
  EXPECT_TRUE((*t)->is_eog(257));
}

TEST_F(BpeGgufErrors, MissingMerges) {
  with_merges_ = false;
  auto t = load([](format::GgufWriter&) {});
  ASSERT_FALSE(t.is_ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("tokenizer.ggml.merges"), std::string::npos);
}

TEST_F(BpeGgufErrors, MergesNotStrings) {
  auto t = load([](format::GgufWriter& w) { w.set_i32s("tokenizer.ggml.merges", {1, 2}); });
  ASSERT_FALSE(t.is_ok());
  EXPECT_EQ(t.status().code(), StatusCode::kCorrupt);
}

TEST_F(BpeGgufErrors, MergeOfUnknownToken) {
  auto t = load([](format::GgufWriter& w) {
    w.set_strings("tokenizer.ggml.merges", {"a b", "ab zz"});
  });
  ASSERT_FALSE(t.is_ok());
  EXPECT_EQ(t.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(t.status().message().find("merge 1 'ab zz'"), std::string::npos)
      << t.status().message();
}

TEST_F(BpeGgufErrors, IdOutOfRangeAndBadTypes) {
  auto t = load([](format::GgufWriter& w) { w.set_u32("tokenizer.ggml.bos_token_id", 9999); });
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find("bos_token_id"), std::string::npos);
  auto t2 = load([](format::GgufWriter& w) { w.set_i32s("tokenizer.ggml.token_type", {1, 1}); });
  ASSERT_FALSE(t2.is_ok());
  EXPECT_NE(t2.status().message().find("token_type"), std::string::npos);
  auto t3 = load([](format::GgufWriter& w) { w.set_u32("tokenizer.ggml.pre", 3); });
  ASSERT_FALSE(t3.is_ok());
  EXPECT_NE(t3.status().message().find("tokenizer.ggml.pre"), std::string::npos);
}

TEST_F(BpeGgufErrors, UnknownPreWarnsAndUsesDefault) {
  ::testing::internal::CaptureStderr();
  auto t = load([](format::GgufWriter& w) { w.set_string("tokenizer.ggml.pre", "no-such-pre"); });
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_NE(err.find("unknown pre-tokenizer 'no-such-pre'"), std::string::npos) << err;
  const auto& bpe = static_cast<const BpeTokenizer&>(**t);
  EXPECT_EQ(bpe.pre_tokenizer().name(), "default");
  EXPECT_EQ((*t)->encode("ab ab", false, false).size(), 3u);  // "ab", "Ġ" (no merge), "ab"
  EXPECT_EQ(decode(**t, (*t)->encode("ab ab", false, false)), "ab ab");
}

}  // namespace
}  // namespace cohort::text
