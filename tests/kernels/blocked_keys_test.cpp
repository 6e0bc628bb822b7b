// Attention over blocked keys (kernels.h AttentionArgs::keys_blocked): every table gives the
// reference's result on the row layout of the same cache, for tiled and generic head dims,
// tile and block edges, GQA layouts and the F16, F32 and Q8_0 cache types; the reference gives the
// same bits in either layout; and per-head limits keep the bits of a call for a head alone.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/fp16.h"
#include "core/rng.h"
#include "kernel_test_util.h"
#include "kernels/kernels.h"
#include "tensor/quantize.h"

namespace cohort::kernels {
namespace {

using testing::tables;

struct KeyShape {
  int64_t n_heads, n_kv_heads, head_dim, n_kv;
};

// One cache, in the row layout and blocked, F16, F32 or Q8_0. The slots of a last block past
// n_kv hold 1000 (finite, as the contract asks; Q8_0: the int8 127 at a scale of 1000 / 127): a
// score of one that leaked through the mask would swamp the result.
struct BlockedCache {
  KeyShape sh;
  DType type;
  std::vector<float> q;
  std::vector<uint16_t> k16, kb16, v16;
  std::vector<float> k32, kb32, v32;
  std::vector<uint8_t> k8, kb8, v8;  // Q8_0

  BlockedCache(const KeyShape& s, DType kv_type, uint64_t seed) : sh(s), type(kv_type) {
    Rng rng(seed);
    const int64_t row = s.n_kv_heads * s.head_dim;
    const int64_t padded = (s.n_kv + kKeyBlock - 1) / kKeyBlock * kKeyBlock;
    q.resize(static_cast<size_t>(s.n_heads * s.head_dim));
    for (float& x : q) x = rng.uniform_f32(-1.0f, 1.0f);
    std::vector<float> k(static_cast<size_t>(s.n_kv * row)), v(k.size());
    for (float& x : k) x = rng.uniform_f32(-1.0f, 1.0f);
    for (float& x : v) x = rng.uniform_f32(-1.0f, 1.0f);
    std::vector<float> kb(static_cast<size_t>(padded * row), 1000.0f);
    for (int64_t t = 0; t < s.n_kv; ++t) {
      for (int64_t h = 0; h < s.n_kv_heads; ++h) {
        for (int64_t d = 0; d < s.head_dim; ++d) {
          kb[static_cast<size_t>(key_index(blocked_args(), t, h, d))] =
              k[static_cast<size_t>(t * row + h * s.head_dim + d)];
        }
      }
    }
    if (kv_type == DType::kQ8_0) {
      // Rows as the row layout quantizes them; blocked, each position's key of each KV head
      // where kernels.h q8_key_value_offset says (the same blocks, so the same values).
      const size_t row_b = row_bytes(kv_type, row);
      k8.resize(static_cast<size_t>(s.n_kv) * row_b);
      v8.resize(k8.size());
      quantize_row_q8_0(k.data(), k8.data(), s.n_kv * row);
      quantize_row_q8_0(v.data(), v8.data(), s.n_kv * row);
      kb8.resize(static_cast<size_t>(padded) * row_b);
      const std::vector<float> pad(static_cast<size_t>(s.head_dim), 1000.0f);
      for (int64_t h = 0; h < s.n_kv_heads; ++h) {
        uint8_t* head = kb8.data() + row_bytes(kv_type, h * padded * s.head_dim);
        for (int64_t t = 0; t < padded; ++t) {
          const float* key =
              t < s.n_kv ? &k[static_cast<size_t>(t * row + h * s.head_dim)] : pad.data();
          store_q8_blocked_key(key, s.head_dim, t, head);
        }
      }
    } else if (kv_type == DType::kF16) {
      for (auto [from, to] : {std::pair{&k, &k16}, std::pair{&kb, &kb16}, std::pair{&v, &v16}}) {
        for (float x : *from) to->push_back(f32_to_fp16(x));
      }
    } else {
      k32 = k;
      kb32 = kb;
      v32 = v;
    }
  }

  int64_t padded() const { return (sh.n_kv + kKeyBlock - 1) / kKeyBlock * kKeyBlock; }

  const void* pick(const std::vector<uint16_t>& h, const std::vector<float>& f,
                   const std::vector<uint8_t>& b) const {
    if (type == DType::kF16) return h.data();
    return type == DType::kQ8_0 ? static_cast<const void*>(b.data()) : f.data();
  }

  AttentionArgs row_args(float* out) const {
    AttentionArgs a;
    a.q = q.data();
    a.k = pick(k16, k32, k8);
    a.v = pick(v16, v32, v8);
    a.kv_type = type;
    a.n_kv = sh.n_kv;
    a.n_heads = sh.n_heads;
    a.n_kv_heads = sh.n_kv_heads;
    a.head_dim = sh.head_dim;
    a.kv_stride = sh.n_kv_heads * sh.head_dim;
    a.scale = 1.0f / std::sqrt(static_cast<float>(sh.head_dim));
    a.out = out;
    return a;
  }

  AttentionArgs blocked_args(float* out = nullptr) const {
    AttentionArgs a = row_args(out);
    a.k = pick(kb16, kb32, kb8);
    a.keys_blocked = true;
    a.k_head_stride = padded() * sh.head_dim;
    return a;
  }
};

std::string describe_cache(const BlockedCache& c) {
  return "heads " + std::to_string(c.sh.n_heads) + "/" + std::to_string(c.sh.n_kv_heads) + " hd " +
         std::to_string(c.sh.head_dim) + " n_kv " + std::to_string(c.sh.n_kv) + " " +
         std::string(dtype_name(c.type));
}

std::vector<float> run_on(const KernelTable& t, const AttentionArgs& args, int64_t n_heads,
                          int64_t head_dim, int64_t n_kv) {
  std::vector<float> out(static_cast<size_t>(n_heads * head_dim), 12345.0f);
  std::vector<float> scratch(static_cast<size_t>(n_kv) + 1);
  AttentionArgs a = args;
  a.out = out.data();
  t.attention(a, 0, n_heads, scratch.data());
  return out;
}

TEST(BlockedKeys, EveryTableMatchesReferenceOnRows) {
  const KeyShape shapes[] = {{8, 2, 64, 1},    {8, 2, 64, 15},   {8, 2, 64, 16},  {8, 2, 64, 17},
                             {8, 2, 64, 63},   {8, 2, 64, 64},   {8, 2, 64, 65},  {8, 2, 64, 300},
                             {8, 2, 64, 2000}, {4, 4, 128, 129}, {20, 1, 64, 77}, {7, 7, 48, 33},
                             {6, 3, 16, 70},   {8, 1, 256, 100}, {8, 2, 80, 90},  {4, 2, 272, 40}};
  uint64_t seed = 30;
  for (DType type : {DType::kF16, DType::kF32, DType::kQ8_0}) {
    for (const KeyShape& s : shapes) {
      if (type == DType::kQ8_0 && (s.head_dim % 32 != 0 || s.head_dim > kKeyBlockMaxHeadDim)) {
        continue;  // no Q8_0 cache of this head dim (kv_cache.h)
      }
      const BlockedCache c(s, type, ++seed);
      const std::vector<float> want =
          run_on(reference(), c.row_args(nullptr), s.n_heads, s.head_dim, s.n_kv);
      // The reference adds a score's products in the same order in either layout.
      EXPECT_EQ(run_on(reference(), c.blocked_args(), s.n_heads, s.head_dim, s.n_kv), want)
          << describe_cache(c);
      for (const KernelTable* t : tables()) {
        const std::vector<float> got = run_on(*t, c.blocked_args(), s.n_heads, s.head_dim, s.n_kv);
        int failures = 0;
        for (size_t i = 0; i < got.size() && failures < 5; ++i) {
          const bool ok = std::isfinite(got[i]) && std::fabs(double{got[i]} - want[i]) <= 2e-5;
          if (!ok) ++failures;
          EXPECT_TRUE(ok) << t->isa << ", " << describe_cache(c) << " [" << i << "] got " << got[i]
                          << " want " << want[i];
        }
      }
    }
  }
}

// The rows of a prompt chunk share one pass (AttentionArgs::n_kv_of_head); each head keeps the
// bits of a call for it alone, whose quad then reads the keys alone.
TEST(BlockedKeys, PerHeadLimitsEqualSingleHeadCalls) {
  for (DType type : {DType::kF16, DType::kF32, DType::kQ8_0}) {
    for (int64_t hd : {64, 32}) {
      const BlockedCache c({10, 1, hd, 200}, type, 50 + static_cast<uint64_t>(hd));
      const std::vector<int64_t> limits = {200, 1, 64, 65, 100, 129, 7, 8, 9, 128};
      for (const KernelTable* t : tables()) {
        AttentionArgs a = c.blocked_args();
        a.n_kv_of_head = limits.data();
        const std::vector<float> batched = run_on(*t, a, 10, hd, 200);
        for (int64_t h = 0; h < 10; ++h) {
          AttentionArgs one = c.blocked_args();
          one.q = c.q.data() + h * hd;
          one.n_heads = 1;
          one.n_kv = limits[static_cast<size_t>(h)];
          const std::vector<float> alone = run_on(*t, one, 1, hd, one.n_kv);
          EXPECT_EQ(
              std::memcmp(alone.data(), batched.data() + h * hd, alone.size() * sizeof(float)), 0)
              << t->isa << " head " << h << " limit " << limits[static_cast<size_t>(h)] << " hd "
              << hd << " " << dtype_name(type);
        }
      }
    }
  }
}

}  // namespace
}  // namespace cohort::kernels
