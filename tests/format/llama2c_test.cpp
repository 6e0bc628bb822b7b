// llama2.c checkpoint + tokenizer conversion: against the same model's GGUF, on a synthetic
// checkpoint with a separate classifier, and on broken inputs.
#include "format/llama2c.h"
#include "support/shared_data.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "format/byte_reader.h"

namespace cohort::format {
namespace {

namespace fs = std::filesystem;

using testing::kSharedData;
const std::string kBin = kSharedData + "/models/stories260K.bin";
const std::string kTok = kSharedData + "/models/tok512.bin";
const std::string kGguf = kSharedData + "/models/stories260K.gguf";

// A file in the test temp dir, removed when the test ends.
class TempFile {
 public:
  TempFile(const std::string& stem, const std::vector<uint8_t>& bytes)
      : path_(::testing::TempDir() + stem + "_" + std::to_string(::getpid()) + ".bin") {
    std::ofstream out(path_, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void put_i32(std::vector<uint8_t>& b, int32_t v) {
  for (int k = 0; k < 4; ++k)
    b.push_back(static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * k)));
}
void put_f32(std::vector<uint8_t>& b, float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  put_i32(b, static_cast<int32_t>(u));
}

std::vector<uint8_t> tokenizer_bytes(const std::vector<std::string>& pieces) {
  std::vector<uint8_t> b;
  put_i32(b, 8);
  for (size_t k = 0; k < pieces.size(); ++k) {
    put_f32(b, -static_cast<float>(k));
    put_i32(b, static_cast<int32_t>(pieces[k].size()));
    b.insert(b.end(), pieces[k].begin(), pieces[k].end());
  }
  return b;
}

void expect_llama2c_error(const Result<GgufFile>& r, const std::string& fragment) {
  ASSERT_FALSE(r.is_ok()) << "expected an error containing '" << fragment << "'";
  const std::string& m = r.status().message();
  EXPECT_EQ(m.rfind("llama2c: ", 0), 0u) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_NE(m.find(fragment), std::string::npos) << m;
}

TEST(Llama2c, Stories260KMatchesItsGguf) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  Result<GgufFile> conv = load_llama2c(kBin, kTok);
  ASSERT_TRUE(conv.is_ok()) << conv.status().message();
  Result<GgufFile> ref = GgufFile::open(kGguf);
  ASSERT_TRUE(ref.is_ok()) << ref.status().message();

  EXPECT_EQ(conv->get_string("general.architecture"), "llama");
  EXPECT_EQ(conv->get_string("general.name"), "llama2.c stories260K");
  EXPECT_EQ(conv->get_int("llama.context_length"), 512);
  EXPECT_EQ(conv->get_int("llama.vocab_size"), 512);
  EXPECT_EQ(conv->get_bool("tokenizer.ggml.add_bos_token"), true);
  for (const char* key :
       {"llama.embedding_length", "llama.block_count", "llama.feed_forward_length",
        "llama.attention.head_count", "llama.attention.head_count_kv", "llama.rope.dimension_count",
        "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
        "tokenizer.ggml.unknown_token_id"}) {
    EXPECT_EQ(conv->get_int(key), ref->get_int(key)) << key;
    ASSERT_TRUE(conv->get_int(key).has_value()) << key;
  }
  EXPECT_EQ(conv->get_float("llama.attention.layer_norm_rms_epsilon"),
            ref->get_float("llama.attention.layer_norm_rms_epsilon"));
  EXPECT_EQ(conv->get_string("tokenizer.ggml.model"), ref->get_string("tokenizer.ggml.model"));

  // 47 tensors: the GGUF's 48 less output.weight (tied to token_embd here).
  EXPECT_EQ(conv->tensors().size(), 47u);
  EXPECT_EQ(conv->find_tensor("output.weight"), nullptr);
  for (const GgufTensorInfo& t : conv->tensors()) {
    SCOPED_TRACE(std::string(t.name));
    const GgufTensorInfo* r = ref->find_tensor(t.name);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(t.type, DType::kF32);
    EXPECT_EQ(t.shape, r->shape);
    ASSERT_EQ(t.bytes, r->bytes);
    EXPECT_EQ(0, std::memcmp(conv->tensor_data(t), ref->tensor_data(*r), t.bytes));
  }
  const GgufTensorInfo* out = ref->find_tensor("output.weight");
  const GgufTensorInfo* emb = conv->find_tensor("token_embd.weight");
  ASSERT_TRUE(out && emb && out->bytes == emb->bytes);
  EXPECT_EQ(0, std::memcmp(ref->tensor_data(*out), conv->tensor_data(*emb), emb->bytes));

  const GgufArray* tokens = conv->get_array("tokenizer.ggml.tokens");
  const GgufArray* ref_tokens = ref->get_array("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens && ref_tokens);
  ASSERT_EQ(tokens->strings.size(), 512u);
  ASSERT_EQ(ref_tokens->strings.size(), 512u);
  for (size_t id = 0; id < 512; ++id) EXPECT_EQ(tokens->strings[id], ref_tokens->strings[id]) << id;
  EXPECT_EQ(tokens->strings[1], "<s>");
  EXPECT_EQ(tokens->strings[2], "</s>");
  const GgufArray* scores = conv->get_array("tokenizer.ggml.scores");
  const GgufArray* ref_scores = ref->get_array("tokenizer.ggml.scores");
  ASSERT_TRUE(scores && ref_scores);
  for (uint64_t id = 0; id < 512; ++id) EXPECT_EQ(scores->float_at(id), ref_scores->float_at(id));
  const GgufArray* types = conv->get_array("tokenizer.ggml.token_type");
  const GgufArray* ref_types = ref->get_array("tokenizer.ggml.token_type");
  ASSERT_TRUE(types && ref_types);
  for (uint64_t id = 0; id < 512; ++id) EXPECT_EQ(types->int_at(id), ref_types->int_at(id)) << id;
}

TEST(Llama2c, LooksLikeLlama2c) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  EXPECT_TRUE(looks_like_llama2c(kBin));
  EXPECT_FALSE(looks_like_llama2c(kGguf));
  EXPECT_FALSE(looks_like_llama2c(kSharedData + "/models/missing.bin"));
  EXPECT_FALSE(looks_like_llama2c(kSharedData + "/models"));
  TempFile tiny("tiny", std::vector<uint8_t>(27, 1));
  EXPECT_FALSE(looks_like_llama2c(tiny.path()));
}

TEST(Llama2c, BrokenCheckpoints) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  std::vector<uint8_t> bin = testing::read_file_bytes(kBin);
  ASSERT_EQ(bin.size(), 1056540u);
  {
    TempFile cut("ckpt_cut", std::vector<uint8_t>(bin.begin(), bin.end() - 1));
    expect_llama2c_error(load_llama2c(cut.path(), kTok), "needs 1056540 bytes: truncated");
  }
  {
    TempFile cut("ckpt_header", std::vector<uint8_t>(bin.begin(), bin.begin() + 20));
    expect_llama2c_error(load_llama2c(cut.path(), kTok), "smaller than the 28-byte header");
  }
  struct Case {
    int field;
    int32_t value;
    const char* fragment;
  };
  for (const Case& c : {Case{0, 0, "header dim is 0"}, Case{3, -8, "header n_heads is -8"},
                        Case{2, 1 << 30, "header n_layers is 1073741824"},
                        Case{3, 7, "dim 64 is not a multiple of n_heads 7"},
                        Case{4, 3, "n_heads 8 is not a multiple of n_kv_heads 3"},
                        Case{3, 64, "head size 1 is odd"}}) {
    std::vector<uint8_t> b = bin;
    std::memcpy(b.data() + 4 * c.field, &c.value, 4);
    TempFile bad("ckpt_bad", b);
    expect_llama2c_error(load_llama2c(bad.path(), kTok), c.fragment);
  }
  expect_llama2c_error(load_llama2c(kSharedData + "/models/missing.bin", kTok), "missing.bin");
}

TEST(Llama2c, BrokenTokenizers) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  std::vector<uint8_t> tok = testing::read_file_bytes(kTok);
  ASSERT_EQ(tok.size(), 6227u);
  {
    TempFile cut("tok_cut", std::vector<uint8_t>(tok.begin(), tok.end() - 1));
    expect_llama2c_error(load_llama2c(kBin, cut.path()), "token 511 length");
  }
  {
    // Cut at a record boundary: one token short.
    size_t last = tok.size() - (8 + 3);  // the last piece has 3 bytes
    ASSERT_EQ(load_u32le(tok.data() + last + 4), 3u);
    TempFile cut("tok_short", std::vector<uint8_t>(tok.begin(), tok.begin() + last));
    expect_llama2c_error(load_llama2c(kBin, cut.path()), "holds 511 tokens but checkpoint");
  }
  {
    std::vector<uint8_t> more = tok;
    std::vector<uint8_t> extra = tokenizer_bytes({"x"});
    more.insert(more.end(), extra.begin() + 4, extra.end());
    TempFile longer("tok_long", more);
    expect_llama2c_error(load_llama2c(kBin, longer.path()), "holds 513 tokens but checkpoint");
  }
  {
    std::vector<uint8_t> neg = tok;
    int32_t bad_len = -5;
    std::memcpy(neg.data() + 4 + 4, &bad_len, 4);
    TempFile bad("tok_neg", neg);
    expect_llama2c_error(load_llama2c(kBin, bad.path()), "token 0 length -5");
  }
  TempFile empty("tok_empty", {});
  expect_llama2c_error(load_llama2c(kBin, empty.path()), "not a llama2.c tokenizer");
}

// A tiny checkpoint whose floats count up from 0 (so each tensor's first element is its file
// position), with a separate classifier.
TEST(Llama2c, SeparateClassifierAndLayout) {
  const int32_t dim = 8, hidden = 12, layers = 2, heads = 4, kv_heads = 2, vocab = 5, seq = 3;
  const int32_t kv = dim * kv_heads / heads, head_size = dim / heads;
  std::vector<uint8_t> b;
  for (int32_t v : {dim, hidden, layers, heads, kv_heads, -vocab, seq}) put_i32(b, v);
  const int64_t floats = int64_t{vocab} * dim +
                         layers * (2 * dim + 2 * dim * dim + 2 * kv * dim + 3 * hidden * dim) +
                         dim + seq * head_size + int64_t{vocab} * dim;
  for (int64_t k = 0; k < floats; ++k) put_f32(b, static_cast<float>(k));
  TempFile ckpt("tiny_ckpt", b);
  TempFile tok("tiny_tok", tokenizer_bytes({"<unk>", "\n<s>\n", "\n</s>\n", "<0x41>", " the cat"}));

  Result<GgufFile> f = load_llama2c(ckpt.path(), tok.path());
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(f->tensors().size(), 2u + 9u * layers + 1u);
  auto first = [&](const char* name) -> float {
    const GgufTensorInfo* t = f->find_tensor(name);
    EXPECT_NE(t, nullptr) << name;
    return t ? load_f32le(f->tensor_data(*t)) : -1;
  };
  int64_t at = 0;
  EXPECT_EQ(first("token_embd.weight"), at);
  at += vocab * dim;
  EXPECT_EQ(first("blk.0.attn_norm.weight"), at);
  EXPECT_EQ(first("blk.1.attn_norm.weight"), at + dim);
  at += layers * dim;
  EXPECT_EQ(first("blk.1.attn_q.weight"), at + dim * dim);
  at += layers * dim * dim;
  EXPECT_EQ(first("blk.0.attn_k.weight"), at);
  at += layers * kv * dim;
  EXPECT_EQ(first("blk.1.attn_v.weight"), at + kv * dim);
  at += layers * kv * dim;
  EXPECT_EQ(first("blk.0.attn_output.weight"), at);
  at += layers * dim * dim;
  EXPECT_EQ(first("blk.1.ffn_norm.weight"), at + dim);
  at += layers * dim;
  EXPECT_EQ(first("blk.0.ffn_gate.weight"), at);
  at += layers * hidden * dim;
  EXPECT_EQ(first("blk.1.ffn_down.weight"), at + hidden * dim);
  at += layers * hidden * dim;
  EXPECT_EQ(first("blk.0.ffn_up.weight"), at);
  at += layers * hidden * dim;
  EXPECT_EQ(first("output_norm.weight"), at);
  at += dim + seq * head_size;
  EXPECT_EQ(first("output.weight"), at);
  EXPECT_EQ(at + vocab * dim, floats);

  EXPECT_EQ(f->find_tensor("blk.0.attn_k.weight")->shape, (std::vector<int64_t>{dim, kv}));
  EXPECT_EQ(f->find_tensor("blk.0.ffn_down.weight")->shape, (std::vector<int64_t>{hidden, dim}));
  EXPECT_EQ(f->find_tensor("blk.0.ffn_up.weight")->shape, (std::vector<int64_t>{dim, hidden}));
  EXPECT_EQ(f->find_tensor("output.weight")->shape, (std::vector<int64_t>{dim, vocab}));
  EXPECT_EQ(f->get_int("llama.rope.dimension_count"), head_size);
  EXPECT_EQ(f->get_int("llama.vocab_size"), vocab);

  const GgufArray* tokens = f->get_array("tokenizer.ggml.tokens");
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ(tokens->strings[1], "<s>");
  EXPECT_EQ(tokens->strings[2], "</s>");
  EXPECT_EQ(tokens->strings[4],
            "\xe2\x96\x81the\xe2\x96\x81"
            "cat");
  const GgufArray* types = f->get_array("tokenizer.ggml.token_type");
  std::vector<int64_t> got;
  for (uint64_t k = 0; k < types->count; ++k) got.push_back(*types->int_at(k));
  EXPECT_EQ(got, (std::vector<int64_t>{2, 3, 3, 6, 1}));
  EXPECT_EQ(f->get_array("tokenizer.ggml.scores")->float_at(4), -4.0);

  // The same checkpoint without its classifier is one tensor short of its header.
  TempFile cut("tiny_cut", std::vector<uint8_t>(b.begin(), b.end() - 4 * vocab * dim));
  expect_llama2c_error(load_llama2c(cut.path(), tok.path()), "+classifier");
}

}  // namespace
}  // namespace cohort::format
