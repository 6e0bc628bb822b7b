// GgufWriter -> GgufFile round trips: every value type, nested arrays, alignments, tensors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.h"
#include "format/gguf.h"
#include "format/gguf_writer.h"

namespace cohort::format {
namespace {

void le(std::vector<uint8_t>& b, uint64_t v, int n) {
  for (int k = 0; k < n; ++k) b.push_back(static_cast<uint8_t>(v >> (8 * k)));
}

// Array payload (element type, count, elements) of n-byte scalars.
std::vector<uint8_t> scalar_array(GgufType elem, int width, const std::vector<uint64_t>& values) {
  std::vector<uint8_t> b;
  le(b, static_cast<uint32_t>(elem), 4);
  le(b, values.size(), 8);
  for (uint64_t v : values) le(b, v, width);
  return b;
}

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint8_t> b(n);
  for (uint8_t& x : b) x = static_cast<uint8_t>(rng.next_u64());
  return b;
}

GgufFile parse(const GgufWriter& w, const std::string& name = "mem.gguf") {
  auto bytes = std::make_shared<const std::vector<uint8_t>>(w.write_memory());
  Result<GgufFile> f = GgufFile::from_bytes(name, bytes);
  EXPECT_TRUE(f.is_ok()) << f.status().message();
  return std::move(f).value();
}

TEST(GgufRoundTrip, EveryScalarType) {
  GgufWriter w;
  w.set_u8("u8", 200);
  w.set_i8("i8", -100);
  w.set_u16("u16", 60000);
  w.set_i16("i16", -30000);
  w.set_u32("u32", 4000000000u);
  w.set_i32("i32", -2000000000);
  w.set_u64("u64", 0xfedcba9876543210ull);
  w.set_u64("u64small", 12345);
  w.set_i64("i64", std::numeric_limits<int64_t>::min());
  w.set_f32("f32", 1e-5f);
  w.set_f64("f64", 3.141592653589793);
  w.set_bool("bool_t", true);
  w.set_bool("bool_f", false);
  w.set_string("str", "hello \xe2\x96\x81world");
  w.set_string("empty", "");
  w.set_u32("replaced", 1);
  w.set_u32("replaced", 2);  // a second set replaces, never duplicates
  GgufFile f = parse(w);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.metadata().size(), 16u);
  EXPECT_EQ(f.alignment(), 32u);

  EXPECT_EQ(f.find("u8")->type, GgufType::kU8);
  EXPECT_EQ(f.get_int("u8"), 200);
  EXPECT_EQ(f.get_int("i8"), -100);
  EXPECT_EQ(f.get_int("u16"), 60000);
  EXPECT_EQ(f.get_int("i16"), -30000);
  EXPECT_EQ(f.get_int("u32"), 4000000000ll);
  EXPECT_EQ(f.get_int("i32"), -2000000000);
  EXPECT_EQ(f.find("u64")->u, 0xfedcba9876543210ull);
  EXPECT_EQ(f.get_int("u64"), std::nullopt);  // does not fit int64
  EXPECT_EQ(f.get_int("u64small"), 12345);
  EXPECT_EQ(f.get_int("i64"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f.get_float("f32"), static_cast<double>(1e-5f));
  EXPECT_EQ(f.get_float("f64"), 3.141592653589793);
  EXPECT_EQ(f.get_float("i32"), -2000000000.0);
  EXPECT_EQ(f.get_int("f32"), std::nullopt);
  EXPECT_EQ(f.get_bool("bool_t"), true);
  EXPECT_EQ(f.get_bool("bool_f"), false);
  EXPECT_EQ(f.get_int("bool_t"), std::nullopt);
  EXPECT_EQ(f.get_bool("u8"), std::nullopt);
  EXPECT_EQ(f.get_string("str"), "hello \xe2\x96\x81world");
  EXPECT_EQ(f.get_string("empty"), "");
  EXPECT_EQ(f.get_string("u8"), std::nullopt);
  EXPECT_EQ(f.get_int("replaced"), 2);
  EXPECT_EQ(f.find("missing"), nullptr);
  EXPECT_EQ(f.get_int("missing"), std::nullopt);
  EXPECT_EQ(f.get_array("str"), nullptr);

  EXPECT_EQ(f.find("f32")->to_display_string(), "1e-05");
  EXPECT_EQ(f.find("i8")->to_display_string(), "-100");
  EXPECT_EQ(f.find("bool_t")->to_display_string(), "true");
  EXPECT_EQ(f.find("str")->to_display_string(), "\"hello \xe2\x96\x81world\"");
  for (const GgufKeyValue& kv : f.metadata()) EXPECT_FALSE(kv.value.to_display_string().empty());
}

TEST(GgufRoundTrip, ArraysOfEveryElementType) {
  GgufWriter w;
  w.set_raw("a_u8", 9, scalar_array(GgufType::kU8, 1, {0, 7, 255}));
  w.set_raw("a_i8", 9, scalar_array(GgufType::kI8, 1, {0x80, 0x7f}));
  w.set_raw("a_u16", 9, scalar_array(GgufType::kU16, 2, {65535, 1}));
  w.set_raw("a_i16", 9, scalar_array(GgufType::kI16, 2, {0x8000}));
  w.set_raw("a_u32", 9, scalar_array(GgufType::kU32, 4, {0xffffffffu, 3}));
  w.set_i32s("a_i32", {1, -2, 3, -4, 5, 6});
  w.set_f32s("a_f32", {0.5f, -1.25f});
  w.set_raw("a_bool", 9, scalar_array(GgufType::kBool, 1, {1, 0, 1}));
  w.set_strings("a_str", {"a", "", "bc d"});
  w.set_raw("a_u64", 9, scalar_array(GgufType::kU64, 8, {~0ull, 9}));
  w.set_raw("a_i64", 9, scalar_array(GgufType::kI64, 8, {static_cast<uint64_t>(-5)}));
  w.set_raw("a_f64", 9, scalar_array(GgufType::kF64, 8, {std::bit_cast<uint64_t>(-2.5)}));
  w.set_i32s("a_empty", {});
  GgufFile f = parse(w);

  const GgufArray* a = f.get_array("a_u8");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->elem_type, GgufType::kU8);
  EXPECT_EQ(a->count, 3u);
  EXPECT_EQ(a->int_at(2), 255);
  EXPECT_EQ(a->int_at(3), std::nullopt);
  EXPECT_EQ(f.get_array("a_i8")->int_at(0), -128);
  EXPECT_EQ(f.get_array("a_i8")->int_at(1), 127);
  EXPECT_EQ(f.get_array("a_u16")->int_at(0), 65535);
  EXPECT_EQ(f.get_array("a_i16")->int_at(0), -32768);
  EXPECT_EQ(f.get_array("a_u32")->int_at(0), 0xffffffffll);
  EXPECT_EQ(f.get_array("a_i32")->int_at(1), -2);
  EXPECT_EQ(f.get_array("a_i32")->float_at(4), 5.0);
  EXPECT_EQ(f.get_array("a_f32")->float_at(1), -1.25);
  EXPECT_EQ(f.get_array("a_f32")->int_at(1), std::nullopt);
  EXPECT_EQ(f.get_array("a_bool")->count, 3u);
  EXPECT_EQ(f.get_array("a_bool")->raw[0], 1);
  EXPECT_EQ(f.get_array("a_bool")->int_at(0), std::nullopt);
  const GgufArray* s = f.get_array("a_str");
  ASSERT_EQ(s->strings.size(), 3u);
  EXPECT_EQ(s->strings[0], "a");
  EXPECT_EQ(s->strings[1], "");
  EXPECT_EQ(s->strings[2], "bc d");
  EXPECT_EQ(s->int_at(0), std::nullopt);
  EXPECT_EQ(f.get_array("a_u64")->int_at(0), std::nullopt);  // 2^64-1 does not fit
  EXPECT_EQ(f.get_array("a_u64")->int_at(1), 9);
  EXPECT_EQ(f.get_array("a_i64")->int_at(0), -5);
  EXPECT_EQ(f.get_array("a_f64")->float_at(0), -2.5);
  EXPECT_EQ(f.get_array("a_empty")->count, 0u);

  EXPECT_EQ(f.find("a_str")->to_display_string(), "[3 strings]");
  EXPECT_EQ(f.find("a_i32")->to_display_string(), "[6 i32: 1, -2, 3, -4, ...]");
  EXPECT_EQ(f.find("a_f32")->to_display_string(), "[2 f32: 0.5, -1.25]");
  EXPECT_EQ(f.find("a_empty")->to_display_string(), "[0 i32]");
  EXPECT_EQ(f.find("a_u64")->to_display_string(), "[2 u64: 18446744073709551615, 9]");
}

TEST(GgufRoundTrip, NestedArrays) {
  // [[1, 2], [], [3]] as i32, and [["x"], ["y", "z"]] as strings.
  std::vector<uint8_t> ints;
  le(ints, 9, 4);  // element type: array
  le(ints, 3, 8);
  for (const std::vector<uint64_t>& inner : std::vector<std::vector<uint64_t>>{{1, 2}, {}, {3}}) {
    std::vector<uint8_t> e = scalar_array(GgufType::kI32, 4, inner);
    ints.insert(ints.end(), e.begin(), e.end());
  }
  std::vector<uint8_t> strs;
  le(strs, 9, 4);
  le(strs, 2, 8);
  for (const std::vector<std::string>& inner :
       std::vector<std::vector<std::string>>{{"x"}, {"y", "z"}}) {
    le(strs, 8, 4);
    le(strs, inner.size(), 8);
    for (const std::string& x : inner) {
      le(strs, x.size(), 8);
      strs.insert(strs.end(), x.begin(), x.end());
    }
  }
  GgufWriter w;
  w.set_raw("nested_i32", 9, ints);
  w.set_raw("nested_str", 9, strs);
  w.set_u32("after", 77);  // parsing continued at the right place
  GgufFile f = parse(w);

  const GgufArray* a = f.get_array("nested_i32");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->elem_type, GgufType::kArray);
  ASSERT_EQ(a->arrays.size(), 3u);
  ASSERT_NE(a->arrays[0].as_array(), nullptr);
  EXPECT_EQ(a->arrays[0].as_array()->count, 2u);
  EXPECT_EQ(a->arrays[0].as_array()->int_at(1), 2);
  EXPECT_EQ(a->arrays[1].as_array()->count, 0u);
  EXPECT_EQ(a->arrays[2].as_array()->int_at(0), 3);
  const GgufArray* s = f.get_array("nested_str");
  ASSERT_EQ(s->arrays.size(), 2u);
  EXPECT_EQ(s->arrays[1].as_array()->strings[1], "z");
  EXPECT_EQ(f.get_int("after"), 77);
  EXPECT_EQ(f.find("nested_i32")->to_display_string(), "[3 arrays]");
}

// Tensors of several types with arbitrary contents, at two alignments, in memory and on disk.
void check_tensors(uint32_t alignment, bool via_file) {
  struct Spec {
    std::string name;
    DType type;
    std::vector<int64_t> shape;
  };
  const std::vector<Spec> specs = {
      {"f32.weight", DType::kF32, {5, 3}},       {"f16.weight", DType::kF16, {7}},
      {"q4_0.weight", DType::kQ4_0, {64, 3, 2}}, {"q6_k.weight", DType::kQ6_K, {256, 2}},
      {"empty.weight", DType::kF32, {0, 4}},     {"f32_4d.weight", DType::kF32, {2, 1, 3, 2}},
  };
  GgufWriter w;
  if (alignment != 32) w.set_alignment(alignment);
  w.set_string("general.architecture", "test");
  std::vector<std::vector<uint8_t>> contents;
  for (size_t k = 0; k < specs.size(); ++k) {
    const Spec& s = specs[k];
    int64_t rows = 1;
    for (size_t d = 1; d < s.shape.size(); ++d) rows *= s.shape[d];
    contents.push_back(random_bytes(rows * row_bytes(s.type, s.shape[0]), k + 1));
    if (k % 2 == 0) {
      w.add_tensor_bytes(s.name, s.type, s.shape, contents.back());
    } else {
      std::vector<uint8_t> copy = contents.back();
      w.add_tensor(s.name, s.type, s.shape, [copy](uint8_t* dst, uint64_t n) {
        ASSERT_EQ(n, copy.size());
        if (n) std::memcpy(dst, copy.data(), n);
      });
    }
  }

  Result<GgufFile> opened = Status::internal("unset");
  std::string path;
  if (via_file) {
    path = ::testing::TempDir() + "gguf_roundtrip_" + std::to_string(::getpid()) + ".gguf";
    Status st = w.write_file(path);
    ASSERT_TRUE(st.is_ok()) << st.message();
    opened = GgufFile::open(path);
  } else {
    opened = GgufFile::from_bytes("mem", std::make_shared<std::vector<uint8_t>>(w.write_memory()));
  }
  ASSERT_TRUE(opened.is_ok()) << opened.status().message();
  GgufFile f = std::move(opened).value();  // views must survive the move
  EXPECT_EQ(f.alignment(), alignment);
  EXPECT_EQ(f.data_offset() % alignment, 0u);
  EXPECT_EQ(f.file_bytes() % alignment, 0u);
  EXPECT_EQ(f.get_string("general.architecture"), "test");
  ASSERT_EQ(f.tensors().size(), specs.size());
  for (size_t k = 0; k < specs.size(); ++k) {
    const GgufTensorInfo& t = f.tensors()[k];
    EXPECT_EQ(t.name, specs[k].name);
    EXPECT_EQ(t.type, specs[k].type);
    EXPECT_EQ(t.shape, specs[k].shape);
    EXPECT_EQ(t.offset % alignment, 0u);
    EXPECT_EQ(t.bytes, contents[k].size());
    EXPECT_EQ(f.find_tensor(specs[k].name), &t);
    if (!contents[k].empty()) {
      EXPECT_EQ(0, std::memcmp(f.tensor_data(t), contents[k].data(), contents[k].size()));
    }
  }
  EXPECT_EQ(f.tensors()[0].n_elements(), 15);
  EXPECT_EQ(f.tensors()[4].n_elements(), 0);
  EXPECT_EQ(f.find_tensor("nope"), nullptr);
  if (via_file) std::remove(path.c_str());
}

TEST(GgufRoundTrip, TensorsAlign32Memory) { check_tensors(32, false); }
TEST(GgufRoundTrip, TensorsAlign64Memory) { check_tensors(64, false); }
TEST(GgufRoundTrip, TensorsAlign32File) { check_tensors(32, true); }
TEST(GgufRoundTrip, TensorsAlign64File) { check_tensors(64, true); }

TEST(GgufRoundTrip, AlignmentSetAsPlainKey) {
  GgufWriter w;
  w.set_u32("general.alignment", 128);
  w.add_tensor_bytes("a", DType::kF32, {3}, std::vector<uint8_t>(12, 1));
  w.add_tensor_bytes("b", DType::kF32, {1}, std::vector<uint8_t>(4, 2));
  GgufFile f = parse(w);
  EXPECT_EQ(f.alignment(), 128u);
  EXPECT_EQ(f.data_offset() % 128, 0u);
  EXPECT_EQ(f.find_tensor("b")->offset, 128u);
  EXPECT_EQ(f.tensor_data(*f.find_tensor("b"))[0], 2);
}

TEST(GgufRoundTrip, EmptyFile) {
  GgufWriter w;
  GgufFile f = parse(w);
  EXPECT_TRUE(f.metadata().empty());
  EXPECT_TRUE(f.tensors().empty());
}

TEST(GgufRoundTrip, WriteFileErrors) {
  GgufWriter w;
  w.set_u32("x", 1);
  Status st = w.write_file("/nonexistent-dir/x/model.gguf");
  ASSERT_FALSE(st.is_ok());
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_EQ(st.message().rfind("gguf: /nonexistent-dir/x/model.gguf: ", 0), 0u) << st.message();

  Result<GgufFile> missing = GgufFile::open("/nonexistent-dir/model.gguf");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().message().rfind("gguf: ", 0), 0u);
}

TEST(GgufRoundTrip, VersionTwoAccepted) {
  GgufWriter w;
  w.set_u32("x", 5);
  std::vector<uint8_t> b = w.write_memory();
  b[4] = 2;
  Result<GgufFile> f =
      GgufFile::from_bytes("v2", std::make_shared<const std::vector<uint8_t>>(std::move(b)));
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(f->version(), 2u);
  EXPECT_EQ(f->get_int("x"), 5);
}

}  // namespace
}  // namespace cohort::format
