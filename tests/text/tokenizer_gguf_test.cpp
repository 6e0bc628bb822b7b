// Tokenizer::from_gguf on the shared test data (llama.cpp's tokenizer test vectors, the
// stories260K reference) and on small hand-written bad vocabularies.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "format/gguf.h"
#include "format/gguf_writer.h"
#include "support/reference_cases.h"
#include "support/shared_data.h"
#include "support/vocab_vectors.h"
#include "text/tokenizer.h"

namespace cohort::text {
namespace {

using testing::kSharedData;

// Skips (with the reason) when the data file is absent; failing to open it is a failure.
#define COHORT_OPEN_GGUF_OR_SKIP(var, path)                                       \
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no test data: " << (path); \
  auto var##_result = format::GgufFile::open(path);                               \
  ASSERT_TRUE(var##_result.is_ok()) << var##_result.status().message();           \
  const format::GgufFile& var = var##_result.value()

void check_vocab_vectors(const std::string& vocab) {
  const std::string base = kSharedData + "/vocab/" + vocab;
  COHORT_OPEN_GGUF_OR_SKIP(file, base);
  auto tok = Tokenizer::from_gguf(file);
  ASSERT_TRUE(tok.is_ok()) << tok.status().message();
  EXPECT_EQ((*tok)->kind(), "llama");

  testing::VocabVectors vectors;
  std::string error;
  ASSERT_TRUE(testing::load_vocab_vectors(base, &vectors, &error)) << error;
  const std::vector<std::string>& cases = vectors.texts;
  ASSERT_EQ(cases.size(), 46u);

  int passed = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::vector<int32_t> got = (*tok)->encode(cases[i], false, false);
    const std::vector<int32_t>& want = vectors.ids[i];
    EXPECT_EQ(got, want) << vocab << " case " << i << ": '" << cases[i] << "'";
    passed += got == want;
    // SentencePiece round trip: the pieces give back the text behind the dummy prefix.
    if (!cases[i].empty()) {
      std::string text;
      for (int32_t id : got) text += (*tok)->token_to_piece(id);
      EXPECT_EQ(text, " " + cases[i]) << vocab << " case " << i;
    }
  }
  std::printf("[ vectors  ] %s: %d/%zu cases pass\n", vocab.c_str(), passed, cases.size());
}

TEST(TokenizerGguf, LlamaSpmVectors) { check_vocab_vectors("ggml-vocab-llama-spm.gguf"); }
TEST(TokenizerGguf, Phi3Vectors) { check_vocab_vectors("ggml-vocab-phi-3.gguf"); }

TEST(TokenizerGguf, Phi3EndTokensAreEndOfGeneration) {
  const std::string path = kSharedData + "/vocab/ggml-vocab-phi-3.gguf";
  COHORT_OPEN_GGUF_OR_SKIP(file, path);
  auto tok = Tokenizer::from_gguf(file);
  ASSERT_TRUE(tok.is_ok()) << tok.status().message();
  const Tokenizer& t = **tok;
  EXPECT_EQ(t.eos_id(), 32000);
  EXPECT_TRUE(t.is_eog(32000));  // <|endoftext|>
  EXPECT_EQ(t.piece(32007), "<|end|>");
  EXPECT_TRUE(t.is_eog(32007));
  // parse_special: chat markers become their ids; whitespace after <|end|> is dropped
  // (llama.cpp's Phi-3 rule), and the text after a special token gets the space prefix.
  EXPECT_EQ(t.encode("<|user|>\nHi<|end|>\n", true, true),
            (std::vector<int32_t>{1, 32010, 6324, 32007}));  // 6324 = "\xE2\x96\x81Hi"
  // Without parse_special the markers are plain text; "</s>" is user-defined in this vocab,
  // so it is split out either way (llama.cpp's rule for user-defined tokens).
  EXPECT_EQ(t.encode("<|end|>", false, false),
            (std::vector<int32_t>{529, 29989, 355, 29989, 29958}));
  EXPECT_EQ(t.encode("a</s>", false, false), (std::vector<int32_t>{263, 2}));
}

TEST(TokenizerGguf, Stories260KMatchesReference) {
  const std::string path = kSharedData + "/models/stories260K.gguf";
  const std::string ref_path = kSharedData + "/reference/stories260K-greedy.txt";
  if (!std::filesystem::exists(ref_path)) GTEST_SKIP() << "no test data: " << ref_path;
  COHORT_OPEN_GGUF_OR_SKIP(file, path);
  auto tok = Tokenizer::from_gguf(file);
  ASSERT_TRUE(tok.is_ok()) << tok.status().message();
  const Tokenizer& t = **tok;
  EXPECT_EQ(t.n_vocab(), 512);
  EXPECT_EQ(t.bos_id(), 1);
  EXPECT_TRUE(t.add_bos_default());
  EXPECT_EQ(t.encode("Once upon a time", true, false),
            (std::vector<int32_t>{1, 403, 407, 261, 378}));
  EXPECT_EQ(t.encode("Lily and Tom", true, false), (std::vector<int32_t>{1, 317, 269, 274, 287}));

  const auto cases = testing::load_reference_cases(ref_path);
  ASSERT_EQ(cases.size(), 2u);
  for (const testing::ReferenceCase& c : cases) {
    EXPECT_EQ(t.encode(c.prompt, true, false), c.prompt_ids) << c.name;
    ASSERT_EQ(c.seq_ids.size(), 201u) << c.name;
    Detokenizer d(t);
    std::string text;
    for (size_t i = 1; i < c.seq_ids.size(); ++i) text += d.push(c.seq_ids[i]);
    text += d.flush();
    // llama2.c drops the leading space of the first piece after BOS and ends with "\n".
    std::string want = c.output;
    ASSERT_FALSE(want.empty());
    ASSERT_EQ(want.back(), '\n');
    want.pop_back();
    EXPECT_EQ(text, " " + want) << c.name;
  }
}

TEST(TokenizerGguf, ByteLevelBpeLoads) {  // the vectors are in bpe_tokenizer_test.cpp
  const std::string path = kSharedData + "/vocab/ggml-vocab-gpt-2.gguf";
  COHORT_OPEN_GGUF_OR_SKIP(file, path);
  auto tok = Tokenizer::from_gguf(file);
  ASSERT_TRUE(tok.is_ok()) << tok.status().message();
  EXPECT_EQ((*tok)->kind(), "gpt2");
  EXPECT_EQ((*tok)->n_vocab(), 50257);
}

// A small valid SPM vocabulary, which each error test then breaks in one way.
struct VocabKeys {
  bool with_model = true;
  bool with_tokens = true;
  int n_types = 5;
  int n_scores = 5;
  int32_t bos = 1;
};

Result<std::unique_ptr<Tokenizer>> tokenizer_from(const VocabKeys& k, const std::string& path,
                                                  Status* write_status) {
  format::GgufWriter w;
  w.set_string("general.architecture", "llama");
  if (k.with_model) w.set_string("tokenizer.ggml.model", "llama");
  if (k.with_tokens) {
    w.set_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "\xE2\x96\x81\x61", "b"});
  }
  w.set_f32s("tokenizer.ggml.scores", std::vector<float>(k.n_scores, 0.0f));
  std::vector<int32_t> types = {2, 3, 3, 1, 1, 1, 1};
  types.resize(k.n_types);
  w.set_i32s("tokenizer.ggml.token_type", types);
  w.set_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(k.bos));
  *write_status = w.write_file(path);
  if (!write_status->is_ok()) return *write_status;
  auto file = format::GgufFile::open(path);
  if (!file.is_ok()) return file.status();
  return Tokenizer::from_gguf(file.value());
}

class TokenizerGgufErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ =
        (std::filesystem::temp_directory_path() /
         ("cohort_text_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
          "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".gguf"))
            .string();
    Status st;
    auto r = tokenizer_from(VocabKeys{}, path_, &st);
    ASSERT_TRUE(st.is_ok()) << st.message();
    ASSERT_TRUE(r.is_ok()) << r.status().message();  // the unbroken vocabulary loads
    EXPECT_EQ((*r)->encode("ab", false, false), (std::vector<int32_t>{3, 4}));
  }
  void TearDown() override { std::remove(path_.c_str()); }

  Status load(const VocabKeys& k) {
    Status st;
    auto r = tokenizer_from(k, path_, &st);
    EXPECT_TRUE(st.is_ok()) << st.message();
    return r.is_ok() ? Status::ok() : r.status();
  }

  std::string path_;
};

TEST_F(TokenizerGgufErrors, MissingModelKey) {
  VocabKeys k;
  k.with_model = false;
  const Status st = load(k);
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.message();
  EXPECT_NE(st.message().find("tokenizer.ggml.model"), std::string::npos) << st.message();
}

TEST_F(TokenizerGgufErrors, MissingTokensArray) {
  VocabKeys k;
  k.with_tokens = false;
  const Status st = load(k);
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.message();
  EXPECT_NE(st.message().find("tokenizer.ggml.tokens"), std::string::npos) << st.message();
}

TEST_F(TokenizerGgufErrors, TokenTypeLengthMismatch) {
  VocabKeys k;
  k.n_types = 4;
  const Status st = load(k);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt) << st.message();
  EXPECT_NE(st.message().find("token_type"), std::string::npos) << st.message();
}

TEST_F(TokenizerGgufErrors, ScoresLengthMismatch) {
  VocabKeys k;
  k.n_scores = 7;
  const Status st = load(k);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt) << st.message();
  EXPECT_NE(st.message().find("scores"), std::string::npos) << st.message();
}

TEST_F(TokenizerGgufErrors, BosIdOutOfRange) {
  VocabKeys k;
  k.bos = 5;
  const Status st = load(k);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt) << st.message();
  EXPECT_NE(st.message().find("bos_token_id"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace cohort::text
