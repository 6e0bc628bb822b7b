// Hand-built hostile GGUF images: each must fail with one clear line, never crash and never
// allocate from an unchecked count.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/gguf.h"
#include "format/gguf_writer.h"

namespace cohort::format {
namespace {

// Raw GGUF bytes, written field by field.
struct Raw {
  std::vector<uint8_t> b;
  Raw& u32(uint32_t v) { return le(v, 4); }
  Raw& u64(uint64_t v) { return le(v, 8); }
  Raw& str(const std::string& s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Raw& pad(size_t n) {
    b.resize(b.size() + n, 0);
    return *this;
  }
  Raw& le(uint64_t v, int n) {
    for (int k = 0; k < n; ++k) b.push_back(static_cast<uint8_t>(v >> (8 * k)));
    return *this;
  }
  Raw& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    b.insert(b.end(), {'G', 'G', 'U', 'F'});
    return u32(version).u64(n_tensors).u64(n_kv);
  }
  Raw& tensor(const std::string& name, std::vector<uint64_t> dims, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) u64(d);
    return u32(type).u64(offset);
  }
  // Pads to 32 and appends data bytes.
  Raw& data(size_t n) {
    b.resize((b.size() + 31) / 32 * 32, 0);
    b.resize(b.size() + n, 0xab);
    return *this;
  }
};

Status open_bytes(std::vector<uint8_t> b) {
  Result<GgufFile> f =
      GgufFile::from_bytes("bad.gguf", std::make_shared<const std::vector<uint8_t>>(std::move(b)));
  return f.status();
}

// Fails, as one line starting "gguf: bad.gguf: ", containing every fragment.
void expect_error(const std::vector<uint8_t>& b, std::vector<std::string> fragments) {
  Status st = open_bytes(b);
  ASSERT_FALSE(st.is_ok()) << "expected an error containing '" << fragments[0] << "'";
  const std::string& m = st.message();
  EXPECT_EQ(m.rfind("gguf: bad.gguf: ", 0), 0u) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  for (const std::string& f : fragments) EXPECT_NE(m.find(f), std::string::npos) << m;
}

TEST(GgufHostile, Magic) {
  expect_error({}, {"too small"});
  expect_error({'G', 'G', 'U'}, {"too small"});
  expect_error(Raw{{'G', 'G', 'M', 'L', 3, 0, 0, 0}}.b, {"not a GGUF file", "47 47 4d 4c"});
}

TEST(GgufHostile, Versions) {
  expect_error(Raw().header(0, 0, 1).b, {"version 1 is not supported"});
  expect_error(Raw().header(0, 0, 4).b, {"version 4 is not supported"});
  EXPECT_EQ(open_bytes(Raw().header(0, 0, 1).b).code(), StatusCode::kUnsupported);
  EXPECT_TRUE(open_bytes(Raw().header(0, 0, 3).b).is_ok());
  expect_error({'G', 'G', 'U', 'F', 3}, {"truncated", "version"});
  std::vector<uint8_t> short_header = Raw().header(0, 0).b;
  short_header.pop_back();
  expect_error(short_header, {"truncated", "metadata count"});
}

TEST(GgufHostile, HugeCounts) {
  expect_error(Raw().header(0, 1ull << 60).b, {"metadata count 1152921504606846976"});
  expect_error(Raw().header(~0ull, 0).b, {"tensor count"});
  expect_error(Raw().header(1ull << 40, 1).str("k").u32(4).u32(1).b, {"tensor count"});
}

TEST(GgufHostile, HugeStringLengths) {
  expect_error(Raw().header(0, 1).u64(~0ull).pad(16).b,
               {"metadata key 0", "length 18446744073709551615"});
  expect_error(Raw().header(0, 1).str("k").u32(8).u64(1ull << 62).b,
               {"'k'", "length 4611686018427387904"});
  expect_error(Raw().header(1, 0).u64(1000).pad(32).b, {"tensor 0 name", "length 1000"});
}

TEST(GgufHostile, HugeArrays) {
  // 2^61 u64 elements, 2^40 strings and 2^40 nested arrays in a tiny file.
  expect_error(Raw().header(0, 1).str("a").u32(9).u32(10).u64(1ull << 61).b,
               {"'a'", "array of 2305843009213693952 u64"});
  expect_error(Raw().header(0, 1).str("a").u32(9).u32(8).u64(1ull << 40).u64(1).b,
               {"array of 1099511627776 string"});
  expect_error(Raw().header(0, 1).str("a").u32(9).u32(9).u64(1ull << 40).b,
               {"array of 1099511627776 array"});
  // A count that fits the bound but whose strings run out.
  expect_error(Raw().header(0, 1).str("a").u32(9).u32(8).u64(3).str("x").u64(100).pad(16).b,
               {"string 1", "length 100"});
}

TEST(GgufHostile, BadValueTypes) {
  expect_error(Raw().header(0, 1).str("k").u32(13).u32(0).b, {"'k'", "unknown value type 13"});
  expect_error(Raw().header(0, 1).str("k").u32(9).u32(77).u64(0).b,
               {"unknown array element type 77"});
  expect_error(Raw().header(0, 1).str("k").u32(10).u32(0).b, {"truncated", "'k'"});
}

TEST(GgufHostile, NestingDepthBomb) {
  Raw r;
  r.header(0, 1).str("bomb").u32(9);
  for (int d = 0; d < 100; ++d) r.u32(9).u64(1);
  r.u32(4).u64(0);
  expect_error(r.b, {"'bomb'", "nested more than 8"});

  // Exactly the limit parses.
  Raw ok;
  ok.header(0, 1).str("deep").u32(9);
  for (uint32_t d = 1; d < kGgufMaxArrayDepth; ++d) ok.u32(9).u64(1);
  ok.u32(4).u64(1).u32(42);
  Result<GgufFile> f =
      GgufFile::from_bytes("ok", std::make_shared<const std::vector<uint8_t>>(ok.b));
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  const GgufArray* a = f->get_array("deep");
  for (uint32_t d = 1; d < kGgufMaxArrayDepth; ++d) a = a->arrays.at(0).as_array();
  EXPECT_EQ(a->int_at(0), 42);
}

TEST(GgufHostile, DuplicateKeysAndNames) {
  expect_error(Raw().header(0, 2).str("k").u32(4).u32(1).str("k").u32(4).u32(2).b,
               {"duplicate metadata key 1 'k'"});
  expect_error(Raw().header(2, 0).tensor("t", {4}, 0, 0).tensor("t", {4}, 0, 32).data(64).b,
               {"duplicate tensor 't'"});
}

TEST(GgufHostile, Alignment) {
  for (uint32_t a : {0u, 3u, 48u}) {
    expect_error(Raw().header(0, 1).str("general.alignment").u32(4).u32(a).b,
                 {"general.alignment " + std::to_string(a) + " is not a nonzero power of two"});
  }
  expect_error(Raw().header(0, 1).str("general.alignment").u32(10).u64(32).b,
               {"general.alignment has type u64"});
}

TEST(GgufHostile, TensorDims) {
  expect_error(Raw().header(1, 0).tensor("t", {}, 0, 0).data(0).b, {"'t' has 0 dimensions"});
  expect_error(Raw().header(1, 0).tensor("t", {1, 1, 1, 1, 1}, 0, 0).data(4).b,
               {"'t' has 5 dimensions"});
  expect_error(Raw().header(1, 0).str("t").u32(0xffffffffu).pad(32).b,
               {"has 4294967295 dimensions"});
  expect_error(Raw().header(1, 0).tensor("t", {~0ull}, 0, 0).data(4).b,
               {"'t' dimension 0 is negative (-1)"});
  expect_error(Raw().header(1, 0).tensor("t", {1ull << 40, 1ull << 40}, 0, 0).data(4).b,
               {"'t' element count overflows"});
  // The element count fits int64 but the F32 byte size does not fit uint64.
  expect_error(Raw().header(1, 0).tensor("t", {1ull << 62, 2}, 0, 0).data(4).b,
               {"'t' element count overflows"});
  expect_error(Raw().header(1, 0).tensor("t", {1ull << 62}, 0, 0).data(4).b,
               {"'t' byte size overflows"});
  expect_error(Raw().header(1, 0).tensor("q", {16}, 2, 0).data(18).b,
               {"'q' row length 16 is not a multiple of the q4_0 block size 32"});
}

TEST(GgufHostile, TensorTypes) {
  expect_error(Raw().header(1, 0).tensor("blk.0.attn_q.weight", {4}, 99, 0).data(16).b,
               {"'blk.0.attn_q.weight' has unknown ggml type id 99"});
  expect_error(Raw().header(1, 0).tensor("t", {32}, 4, 0).data(32).b,
               {"'t' has unknown ggml type id 4"});
}

TEST(GgufHostile, TensorOffsets) {
  expect_error(Raw().header(1, 0).tensor("t", {4}, 0, 4).data(64).b,
               {"'t' offset 4 is not a multiple of the alignment 32"});
  expect_error(Raw().header(1, 0).tensor("t", {4}, 0, 64).data(64).b,
               {"'t' data [64, +16)", "runs past end of file"});
  expect_error(Raw().header(1, 0).tensor("t", {4}, 0, ~0ull << 5).data(64).b,
               {"'t' data", "runs past end of file"});
  expect_error(Raw().header(1, 0).tensor("t", {4}, 0, 0).b, {"'t'", "runs past end of file"});
  expect_error(Raw().header(2, 0).tensor("a", {16}, 0, 0).tensor("b", {4}, 0, 32).data(128).b,
               {"'a' data [0, 64) overlaps tensor 'b' at 32"});
  // Listed out of order, still overlapping.
  expect_error(Raw().header(2, 0).tensor("b", {4}, 0, 32).tensor("a", {16}, 0, 0).data(128).b,
               {"overlaps"});
  // Adjacent, not overlapping: fine.
  EXPECT_TRUE(
      open_bytes(Raw().header(2, 0).tensor("a", {8}, 0, 0).tensor("b", {4}, 0, 32).data(64).b)
          .is_ok());
}

TEST(GgufHostile, HostileTextIsEscaped) {
  expect_error(Raw().header(0, 1).str("line\nbreak'").u32(13).b,
               {"'line\\x0abreak\\x27'", "unknown value type 13"});
  std::string long_name(500, 'n');
  Status st = open_bytes(Raw().header(1, 0).tensor(long_name, {4}, 99, 0).data(16).b);
  EXPECT_LT(st.message().size(), 200u) << st.message();
}

TEST(GgufHostile, WriterSetRawFeedsBadValues) {
  GgufWriter w;
  w.set_raw("bad", 9, {4, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f});
  expect_error(w.write_memory(), {"'bad'", "array of"});

  GgufWriter bad_alignment;
  bad_alignment.set_raw("general.alignment", 4, {3, 0, 0, 0});
  bad_alignment.add_tensor_bytes("t", DType::kF32, {1}, {0, 0, 0, 0});
  expect_error(bad_alignment.write_memory(), {"general.alignment 3 is not a nonzero power"});
}

}  // namespace
}  // namespace cohort::format
