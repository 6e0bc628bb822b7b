// Real GGUF files from the shared data folder, plus truncation and corruption sweeps over
// them and over a synthetic file that holds every value type.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.h"
#include "format/gguf.h"
#include "format/gguf_writer.h"
#include "support/shared_data.h"

namespace cohort::format {
namespace {

namespace fs = std::filesystem;

using testing::kSharedData;

std::vector<std::string> gguf_files() {
  std::vector<std::string> out;
  for (const char* dir : {"/models", "/vocab"}) {
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(kSharedData + dir, ec)) {
      if (e.path().extension() == ".gguf") out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Walks everything a caller might touch in a parsed file.
void touch_everything(const GgufFile& f) {
  for (const GgufKeyValue& kv : f.metadata()) {
    EXPECT_EQ(f.find(kv.key), &kv.value);
    std::string s = kv.value.to_display_string();
    EXPECT_EQ(s.find('\n'), std::string::npos);
    if (const GgufArray* a = kv.value.as_array()) {
      for (uint64_t k = 0; k < a->count && k < 4; ++k) {
        (void)a->int_at(k);
        (void)a->float_at(k);
      }
    }
  }
  for (const GgufTensorInfo& t : f.tensors()) {
    EXPECT_EQ(f.find_tensor(t.name), &t);
    EXPECT_GE(t.n_elements(), 0);
    EXPECT_LE(f.data_offset() + t.offset + t.bytes, f.file_bytes());
    if (t.bytes > 0) {
      volatile uint8_t last = f.tensor_data(t)[t.bytes - 1];
      (void)last;
    }
  }
}

Status parse_prefix(const std::vector<uint8_t>& all, size_t n, const std::string& name) {
  auto bytes = std::make_shared<const std::vector<uint8_t>>(all.begin(), all.begin() + n);
  return GgufFile::from_bytes(name, bytes).status();
}

void expect_clean_error(const Status& st, size_t at) {
  ASSERT_FALSE(st.is_ok()) << "prefix of " << at << " bytes parsed";
  ASSERT_EQ(st.message().rfind("gguf: ", 0), 0u) << st.message();
  ASSERT_EQ(st.message().find('\n'), std::string::npos) << st.message();
}

TEST(GgufFiles, EveryRealFileOpens) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  std::vector<std::string> files = gguf_files();
  ASSERT_GE(files.size(), 2u);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    Result<GgufFile> f = GgufFile::open(path);
    ASSERT_TRUE(f.is_ok()) << f.status().message();
    EXPECT_EQ(f->version(), 3u);
    EXPECT_TRUE(f->get_string("general.architecture").has_value());
    const GgufArray* tokens = f->get_array("tokenizer.ggml.tokens");
    ASSERT_NE(tokens, nullptr);
    EXPECT_EQ(tokens->elem_type, GgufType::kString);
    EXPECT_EQ(tokens->strings.size(), tokens->count);
    touch_everything(*f);
  }
}

TEST(GgufFiles, Stories260K) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  Result<GgufFile> r = GgufFile::open(kSharedData + "/models/stories260K.gguf");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  GgufFile f = std::move(r).value();
  EXPECT_EQ(f.tensors().size(), 48u);
  EXPECT_EQ(f.metadata().size(), 19u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_int("llama.embedding_length"), 64);
  EXPECT_EQ(f.get_int("llama.block_count"), 5);
  EXPECT_EQ(f.get_int("llama.feed_forward_length"), 172);
  EXPECT_EQ(f.get_int("llama.attention.head_count_kv"), 4);
  EXPECT_NEAR(*f.get_float("llama.attention.layer_norm_rms_epsilon"), 1e-5, 1e-12);
  EXPECT_EQ(f.get_array("tokenizer.ggml.tokens")->count, 512u);
  EXPECT_EQ(f.get_array("tokenizer.ggml.scores")->count, 512u);
  EXPECT_EQ(f.find("tokenizer.ggml.tokens")->to_display_string(), "[512 strings]");
  const GgufTensorInfo* emb = f.find_tensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->type, DType::kF32);
  EXPECT_EQ(emb->shape, (std::vector<int64_t>{64, 512}));
  EXPECT_EQ(emb->bytes, 64u * 512u * 4u);
  for (const GgufTensorInfo& t : f.tensors()) EXPECT_EQ(t.type, DType::kF32);
}

TEST(GgufFiles, TinyRandom) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  Result<GgufFile> f = GgufFile::open(kSharedData + "/models/llama-2-tiny-random.gguf");
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(f->tensors().size(), 12u);
  int n_f16 = 0;
  for (const GgufTensorInfo& t : f->tensors()) n_f16 += t.type == DType::kF16;
  EXPECT_EQ(n_f16, 9);
  EXPECT_EQ(f->get_int("llama.embedding_length"), 8);
  EXPECT_EQ(f->get_array("tokenizer.ggml.tokens")->count, 32000u);
}

// Every prefix of the header region (sampled for very large headers) must fail cleanly.
TEST(GgufFiles, TruncatedHeadersFailCleanly) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  for (const char* name : {"stories260K.gguf", "llama-2-tiny-random.gguf"}) {
    SCOPED_TRACE(name);
    const std::string path = kSharedData + "/models/" + name;
    Result<GgufFile> full = GgufFile::open(path);
    ASSERT_TRUE(full.is_ok()) << full.status().message();
    std::vector<uint8_t> all = testing::read_file_bytes(path);
    ASSERT_EQ(all.size(), full->file_bytes());
    const size_t end = std::min<size_t>(all.size() - 1, full->data_offset() + 300);
    // Every offset in the first 16 KiB (magic, counts, the first KVs: all of stories260K's
    // header) and the last 2 KiB (the tensor directory and the data start); a stride through
    // a large middle (a 32000-token vocab), where each prefix costs a full copy and parse.
    const size_t kDenseHead = 16 << 10;
    const size_t kDenseTail = 2 << 10;
    size_t tested = 0;
    for (size_t n = 0; n <= end;) {
      expect_clean_error(parse_prefix(all, n, name), n);
      if (::testing::Test::HasFatalFailure()) return;
      ++tested;
      bool dense = n < kDenseHead || n + kDenseTail >= end;
      n += dense ? 1 : 4999;
    }
    EXPECT_GT(tested, 1000u);
    // Inside the data section: cutting one byte off any tensor's end fails.
    for (const GgufTensorInfo& t : full->tensors()) {
      size_t cut = full->data_offset() + t.offset + t.bytes - 1;
      Status st = parse_prefix(all, cut, name);
      expect_clean_error(st, cut);
      EXPECT_NE(st.message().find("runs past end of file"), std::string::npos) << st.message();
    }
  }
}

// A synthetic file with every value type, nested arrays and a few tensors.
std::vector<uint8_t> synthetic_file() {
  GgufWriter w;
  w.set_alignment(64);
  w.set_u8("u8", 1);
  w.set_i8("i8", -1);
  w.set_u16("u16", 2);
  w.set_i16("i16", -2);
  w.set_u32("u32", 3);
  w.set_i32("i32", -3);
  w.set_u64("u64", 4);
  w.set_i64("i64", -4);
  w.set_f32("f32", 0.5f);
  w.set_f64("f64", 0.25);
  w.set_bool("bool", true);
  w.set_string("str", "text");
  w.set_strings("strs", {"a", "bb", "ccc"});
  w.set_f32s("f32s", {1, 2, 3});
  w.set_i32s("i32s", {4, 5, 6});
  std::vector<uint8_t> nested = {9, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0};
  for (int k = 0; k < 2; ++k) {
    std::vector<uint8_t> inner = {0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 7, 8, 9};
    nested.insert(nested.end(), inner.begin(), inner.end());
  }
  w.set_raw("nested", 9, nested);
  w.add_tensor_bytes("a", DType::kF32, {4, 2}, std::vector<uint8_t>(32, 1));
  w.add_tensor_bytes("b", DType::kQ4_0, {32}, std::vector<uint8_t>(18, 2));
  w.add_tensor_bytes("c", DType::kF16, {3}, std::vector<uint8_t>(6, 3));
  return w.write_memory();
}

// Seeded byte flips in the header region: each either parses or fails cleanly.
void corrupt_sweep(std::vector<uint8_t> image, size_t region, int iterations, uint64_t seed) {
  auto bytes = std::make_shared<std::vector<uint8_t>>(std::move(image));
  region = std::min(region, bytes->size());
  Rng rng(seed);
  int parsed = 0;
  for (int it = 0; it < iterations; ++it) {
    int n_flips = 1 + static_cast<int>(rng.next_u64() % 8);
    std::vector<std::pair<size_t, uint8_t>> saved;
    for (int k = 0; k < n_flips; ++k) {
      size_t at = rng.next_u64() % region;
      saved.emplace_back(at, (*bytes)[at]);
      uint64_t how = rng.next_u64();
      uint8_t& b = (*bytes)[at];
      switch (how % 4) {
        case 0:
          b ^= static_cast<uint8_t>(1u << (how >> 8) % 8);
          break;
        case 1:
          b = static_cast<uint8_t>(how >> 8);
          break;
        case 2:
          b = 0xff;
          break;
        default:
          b = 0;
          break;
      }
    }
    {
      Result<GgufFile> f = GgufFile::from_bytes("corrupt.gguf", bytes);
      if (f.is_ok()) {
        ++parsed;
        touch_everything(*f);
      } else {
        expect_clean_error(f.status(), it);
      }
    }
    for (auto k = saved.rbegin(); k != saved.rend(); ++k) (*bytes)[k->first] = k->second;
    if (::testing::Test::HasFailure()) return;
  }
  // Some flips land in harmless places (values, names): the sweep exercised both outcomes.
  EXPECT_GT(parsed, 0);
  EXPECT_LT(parsed, iterations);
}

TEST(GgufFiles, CorruptSyntheticHeader) {
  std::vector<uint8_t> image = synthetic_file();
  Result<GgufFile> f =
      GgufFile::from_bytes("synthetic", std::make_shared<const std::vector<uint8_t>>(image));
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  corrupt_sweep(image, f->data_offset(), 2000, 1);
}

TEST(GgufFiles, CorruptStories260KHeader) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  const std::string path = kSharedData + "/models/stories260K.gguf";
  Result<GgufFile> f = GgufFile::open(path);
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  corrupt_sweep(testing::read_file_bytes(path), f->data_offset(), 2000, 2);
}

}  // namespace
}  // namespace cohort::format
