// The non-matmul ops (rmsnorm, rope, softmax, silu_mul, add, attention): every available
// table against the scalar reference on random inputs with odd sizes and tails, plus known
// values and a double-precision brute force for the reference itself.
//
// Tolerances (|got - want| <= rel * |want| + abs):
//   add       exact (one IEEE add per element in every variant)
//   rope      exact (no variant overrides it yet); known values 1e-6
//   rmsnorm   rel 1e-5, abs 1e-6  (sum of squares accumulated in a different order)
//   softmax   rel 1e-5, abs 1e-9  (vector exp is within 2e-7 relative of expf)
//   silu_mul  rel 1e-5, abs 1e-6
//   attention abs 2e-5 * max|v| against the reference; the reference against double
//             precision abs 1e-5 * max|v|. For a Q8_0 cache both sides read the same
//             decoded values (scale x int8, exact in float; the SIMD walks' blocked keys
//             multiply a 32-dim group's sum by the scale instead: another rounding order,
//             as any other order of the adds), so the tolerances are the same.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/fp16.h"
#include "core/rng.h"
#include "kernel_test_util.h"
#include "kernels/kernels.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

namespace cohort::kernels {
namespace {

using testing::tables;

const int64_t kSizes[] = {1, 7, 8, 9, 63, 64, 65, 1000, 4096};

std::vector<float> random_vec(Rng& rng, int64_t n, float lo, float hi) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = rng.uniform_f32(lo, hi);
  return v;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rel,
                  double abs, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int failures = 0;
  for (size_t i = 0; i < got.size() && failures < 5; ++i) {
    const double tol = rel * std::fabs(want[i]) + abs;
    const bool ok = std::isfinite(got[i]) && std::fabs(double{got[i]} - want[i]) <= tol;
    if (!ok) ++failures;
    EXPECT_TRUE(ok) << what << " [" << i << "] got " << got[i] << " want " << want[i];
  }
}

TEST(Ops, EveryTableHasEveryOp) {
  for (const KernelTable* t : tables()) {
    EXPECT_NE(t->rmsnorm, nullptr) << t->isa;
    EXPECT_NE(t->rope, nullptr) << t->isa;
    EXPECT_NE(t->softmax, nullptr) << t->isa;
    EXPECT_NE(t->silu_mul, nullptr) << t->isa;
    EXPECT_NE(t->add, nullptr) << t->isa;
    EXPECT_NE(t->attention, nullptr) << t->isa;
  }
}

// ---------------------------------------------------------------------------------------
// rmsnorm

TEST(Ops, RmsnormMatchesReference) {
  const KernelTable& ref = reference();
  Rng rng(1);
  for (const KernelTable* t : tables()) {
    for (int64_t n : kSizes) {
      const std::vector<float> x = random_vec(rng, n, -3.0f, 3.0f);
      const std::vector<float> w = random_vec(rng, n, -2.0f, 2.0f);
      std::vector<float> want(x.size()), got(x.size());
      ref.rmsnorm(x.data(), w.data(), want.data(), n, 1e-5f);
      t->rmsnorm(x.data(), w.data(), got.data(), n, 1e-5f);
      expect_close(got, want, 1e-5, 1e-6, std::string(t->isa) + " rmsnorm n=" + std::to_string(n));
    }
  }
}

TEST(Ops, RmsnormKnownValues) {
  // x = (3, 4): mean(x^2) = 12.5, eps = 0 -> y = x / sqrt(12.5) * w.
  const float x[2] = {3.0f, 4.0f};
  const float w[2] = {1.0f, 2.0f};
  for (const KernelTable* t : tables()) {
    float y[2];
    t->rmsnorm(x, w, y, 2, 0.0f);
    EXPECT_NEAR(y[0], 3.0 / std::sqrt(12.5), 1e-6) << t->isa;
    EXPECT_NEAR(y[1], 8.0 / std::sqrt(12.5), 1e-6) << t->isa;
  }
}

TEST(Ops, RmsnormInPlace) {
  Rng rng(2);
  for (const KernelTable* t : tables()) {
    for (int64_t n : kSizes) {
      const std::vector<float> x = random_vec(rng, n, -3.0f, 3.0f);
      const std::vector<float> w = random_vec(rng, n, -2.0f, 2.0f);
      std::vector<float> separate(x.size());
      t->rmsnorm(x.data(), w.data(), separate.data(), n, 1e-6f);
      std::vector<float> inplace = x;
      t->rmsnorm(inplace.data(), w.data(), inplace.data(), n, 1e-6f);
      EXPECT_EQ(inplace, separate) << t->isa << " n=" << n;
    }
  }
}

// ---------------------------------------------------------------------------------------
// rope

TEST(Ops, RopeKnownValues) {
  // Two heads of 4 dims, n_rot 4: pair 0 turns by 90 degrees (cos 0, sin 1), pair 1 by the
  // 3-4-5 angle (cos 0.6, sin 0.8). Expected values worked out by hand.
  const float cos[2] = {0.0f, 0.6f};
  const float sin[2] = {1.0f, 0.8f};
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  // kNormal rotates (x0,x1) and (x2,x3): (1,2)->(-2,1), (3,4)->(1.8-3.2, 2.4+2.4).
  const std::vector<float> normal = {-2.0f, 1.0f, -1.4f, 4.8f, -6.0f, 5.0f, -2.2f, 10.4f};
  // kNeox rotates (x0,x2) and (x1,x3): (1,3)->(-3,1), (2,4)->(1.2-3.2, 1.6+2.4).
  const std::vector<float> neox = {-3.0f, -2.0f, 1.0f, 4.0f, -7.0f, -2.8f, 5.0f, 9.6f};
  for (const KernelTable* t : tables()) {
    std::vector<float> a = x;
    t->rope(a.data(), 2, 4, 4, cos, sin, RopeStyle::kNormal);
    expect_close(a, normal, 0.0, 1e-6, std::string(t->isa) + " rope normal");
    std::vector<float> b = x;
    t->rope(b.data(), 2, 4, 4, cos, sin, RopeStyle::kNeox);
    expect_close(b, neox, 0.0, 1e-6, std::string(t->isa) + " rope neox");
  }
}

TEST(Ops, RopePartialRotationLeavesTailUntouched) {
  Rng rng(3);
  const int64_t n_heads = 3, head_dim = 8, n_rot = 4;
  const std::vector<float> cos = {std::cos(0.3f), std::cos(0.05f)};
  const std::vector<float> sin = {std::sin(0.3f), std::sin(0.05f)};
  const std::vector<float> x = random_vec(rng, n_heads * head_dim, -1.0f, 1.0f);
  for (const KernelTable* t : tables()) {
    for (RopeStyle style : {RopeStyle::kNormal, RopeStyle::kNeox}) {
      std::vector<float> y = x;
      t->rope(y.data(), n_heads, head_dim, n_rot, cos.data(), sin.data(), style);
      for (int64_t h = 0; h < n_heads; ++h) {
        const float* xh = x.data() + h * head_dim;
        const float* yh = y.data() + h * head_dim;
        for (int64_t i = 0; i < n_rot / 2; ++i) {
          const int64_t i0 = style == RopeStyle::kNormal ? 2 * i : i;
          const int64_t i1 = style == RopeStyle::kNormal ? 2 * i + 1 : i + n_rot / 2;
          EXPECT_NEAR(yh[i0], xh[i0] * cos[i] - xh[i1] * sin[i], 1e-6) << t->isa;
          EXPECT_NEAR(yh[i1], xh[i0] * sin[i] + xh[i1] * cos[i], 1e-6) << t->isa;
        }
        for (int64_t d = n_rot; d < head_dim; ++d) EXPECT_EQ(yh[d], xh[d]) << t->isa;
      }
    }
  }
}

TEST(Ops, RopeMatchesReference) {
  const KernelTable& ref = reference();
  Rng rng(4);
  struct Shape {
    int64_t n_heads, head_dim, n_rot;
  };
  for (const Shape& s :
       {Shape{1, 2, 2}, Shape{4, 64, 64}, Shape{3, 128, 64}, Shape{5, 12, 12}, Shape{32, 8, 8}}) {
    std::vector<float> cos(static_cast<size_t>(s.n_rot / 2)), sin(cos.size());
    for (size_t i = 0; i < cos.size(); ++i) {
      const float a = rng.uniform_f32(-3.0f, 3.0f);
      cos[i] = std::cos(a);
      sin[i] = std::sin(a);
    }
    const std::vector<float> x = random_vec(rng, s.n_heads * s.head_dim, -2.0f, 2.0f);
    for (const KernelTable* t : tables()) {
      for (RopeStyle style : {RopeStyle::kNormal, RopeStyle::kNeox}) {
        std::vector<float> want = x, got = x;
        ref.rope(want.data(), s.n_heads, s.head_dim, s.n_rot, cos.data(), sin.data(), style);
        t->rope(got.data(), s.n_heads, s.head_dim, s.n_rot, cos.data(), sin.data(), style);
        expect_close(got, want, 1e-6, 1e-6, std::string(t->isa) + " rope");
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// softmax

TEST(Ops, SoftmaxMatchesReference) {
  const KernelTable& ref = reference();
  Rng rng(5);
  for (const KernelTable* t : tables()) {
    for (int64_t n : kSizes) {
      const std::vector<float> x = random_vec(rng, n, -10.0f, 10.0f);
      std::vector<float> want = x, got = x;
      ref.softmax(want.data(), n);
      t->softmax(got.data(), n);
      expect_close(got, want, 1e-5, 1e-9, std::string(t->isa) + " softmax n=" + std::to_string(n));
    }
  }
}

TEST(Ops, SoftmaxAgainstDouble) {
  Rng rng(6);
  for (const KernelTable* t : tables()) {
    for (int64_t n : kSizes) {
      const std::vector<float> x = random_vec(rng, n, -20.0f, 20.0f);
      double mx = x[0];
      for (float v : x) mx = std::max(mx, double{v});
      double sum = 0.0;
      for (float v : x) sum += std::exp(v - mx);
      std::vector<float> want(x.size());
      for (size_t i = 0; i < x.size(); ++i) want[i] = static_cast<float>(std::exp(x[i] - mx) / sum);
      std::vector<float> got = x;
      t->softmax(got.data(), n);
      expect_close(got, want, 1e-5, 1e-12, std::string(t->isa) + " softmax vs double");
    }
  }
}

TEST(Ops, SoftmaxLargeMagnitudes) {
  Rng rng(7);
  for (const KernelTable* t : tables()) {
    for (int64_t n : kSizes) {
      std::vector<float> x = random_vec(rng, n, -1e4f, 1e4f);
      x[static_cast<size_t>(n / 2)] = 3e38f;  // huge max: everything else underflows to 0
      t->softmax(x.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_TRUE(std::isfinite(x[static_cast<size_t>(i)])) << t->isa << " n=" << n;
        EXPECT_EQ(x[static_cast<size_t>(i)], i == n / 2 ? 1.0f : 0.0f) << t->isa << " n=" << n;
      }
      // All equal and huge: uniform.
      std::vector<float> y(static_cast<size_t>(n), -3e38f);
      t->softmax(y.data(), n);
      for (float v : y) EXPECT_NEAR(v, 1.0 / static_cast<double>(n), 1e-6 / n) << t->isa;
      // Wide spread: sums to 1, nothing NaN.
      std::vector<float> z = random_vec(rng, n, -100.0f, 100.0f);
      t->softmax(z.data(), n);
      double s = 0.0;
      for (float v : z) {
        ASSERT_TRUE(std::isfinite(v)) << t->isa;
        s += v;
      }
      EXPECT_NEAR(s, 1.0, 1e-5) << t->isa << " n=" << n;
    }
  }
}

// ---------------------------------------------------------------------------------------
// silu_mul, add

TEST(Ops, SiluMulMatchesReference) {
  const KernelTable& ref = reference();
  Rng rng(8);
  for (const KernelTable* t : tables()) {
    for (int64_t n : kSizes) {
      const std::vector<float> g = random_vec(rng, n, -12.0f, 12.0f);
      const std::vector<float> u = random_vec(rng, n, -3.0f, 3.0f);
      std::vector<float> want(g.size()), got(g.size());
      ref.silu_mul(g.data(), u.data(), want.data(), n);
      t->silu_mul(g.data(), u.data(), got.data(), n);
      expect_close(got, want, 1e-5, 1e-6, std::string(t->isa) + " silu_mul n=" + std::to_string(n));

      // Aliasing out == gate and out == up.
      std::vector<float> a = g;
      t->silu_mul(a.data(), u.data(), a.data(), n);
      EXPECT_EQ(a, got) << t->isa << " out==gate n=" << n;
      std::vector<float> b = u;
      t->silu_mul(g.data(), b.data(), b.data(), n);
      EXPECT_EQ(b, got) << t->isa << " out==up n=" << n;
    }
  }
}

TEST(Ops, SiluMulExtremes) {
  const std::vector<float> g = {0.0f, 1.0f, -1.0f, 100.0f, -100.0f, 1e30f, -1e30f, 88.5f, -88.5f};
  const std::vector<float> u(g.size(), 2.0f);
  std::vector<float> want(g.size());
  for (size_t i = 0; i < g.size(); ++i) {
    want[i] = static_cast<float>(g[i] / (1.0 + std::exp(-double{g[i]})) * u[i]);
  }
  for (const KernelTable* t : tables()) {
    std::vector<float> got(g.size());
    t->silu_mul(g.data(), u.data(), got.data(), static_cast<int64_t>(g.size()));
    expect_close(got, want, 1e-5, 1e-30, std::string(t->isa) + " silu extremes");
  }
}

TEST(Ops, AddExactAndInPlace) {
  const KernelTable& ref = reference();
  Rng rng(9);
  for (const KernelTable* t : tables()) {
    for (int64_t n : kSizes) {
      const std::vector<float> a = random_vec(rng, n, -5.0f, 5.0f);
      const std::vector<float> b = random_vec(rng, n, -5.0f, 5.0f);
      std::vector<float> want(a.size()), got(a.size());
      ref.add(a.data(), b.data(), want.data(), n);
      t->add(a.data(), b.data(), got.data(), n);
      EXPECT_EQ(got, want) << t->isa << " n=" << n;
      for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(want[i], a[i] + b[i]);
      std::vector<float> x = a;
      t->add(x.data(), b.data(), x.data(), n);
      EXPECT_EQ(x, want) << t->isa << " out==a n=" << n;
      std::vector<float> y = b;
      t->add(a.data(), y.data(), y.data(), n);
      EXPECT_EQ(y, want) << t->isa << " out==b n=" << n;
    }
  }
}

// ---------------------------------------------------------------------------------------
// attention

struct AttnCase {
  int64_t n_heads = 8;
  int64_t n_kv_heads = 2;
  int64_t head_dim = 64;
  int64_t n_kv = 17;
  int64_t pad = 0;  // extra elements per position beyond n_kv_heads * head_dim
  DType kv_type = DType::kF16;
  float q_range = 1.0f;  // q, k uniform in [-range, range]; v in [-1, 1]
};

std::string describe(const AttnCase& c) {
  return "heads " + std::to_string(c.n_heads) + "/" + std::to_string(c.n_kv_heads) + " hd " +
         std::to_string(c.head_dim) + " n_kv " + std::to_string(c.n_kv) + " pad " +
         std::to_string(c.pad) + " " + std::string(dtype_name(c.kv_type));
}

// The cache types the attention kernels read.
constexpr DType kKvTypes[] = {DType::kF16, DType::kF32, DType::kQ8_0};

// Head dims for a test over type: float_dims as given for F16/F32; for Q8_0 (whole blocks
// of 32 only) those that are multiples of 32, plus 544 whenever one is not, so the
// generic path (head_dim above the tiled path's 512) is still covered.
std::vector<int64_t> head_dims_for(DType type, std::initializer_list<int64_t> float_dims) {
  if (type != DType::kQ8_0) return float_dims;
  std::vector<int64_t> dims;
  bool generic = false;
  for (int64_t hd : float_dims) {
    if (hd % kQK == 0) {
      dims.push_back(hd);
    } else {
      generic = true;
    }
  }
  if (generic) dims.push_back(544);
  return dims;
}

// A filled-in problem. K/V are kept both as stored (F16 bits, floats or Q8_0 blocks) and as
// the floats they represent, for the brute force. Padding holds NaN so that reading it
// shows up (in Q8_0: blocks with a NaN scale).
struct AttnProblem {
  AttnCase c;
  int64_t kv_stride = 0;
  std::vector<float> q;
  std::vector<float> k, v;         // as floats (exactly what the cache holds)
  std::vector<uint16_t> k16, v16;  // F16 storage
  std::vector<float> k32, v32;     // F32 storage
  std::vector<BlockQ8_0> k8, v8;   // Q8_0 storage

  const void* stored(const std::vector<uint16_t>& s16, const std::vector<float>& s32,
                     const std::vector<BlockQ8_0>& s8) const {
    if (c.kv_type == DType::kF16) return s16.data();
    if (c.kv_type == DType::kQ8_0) return s8.data();
    return s32.data();
  }

  AttentionArgs args(float* out) const {
    AttentionArgs a;
    a.q = q.data();
    a.k = stored(k16, k32, k8);
    a.v = stored(v16, v32, v8);
    a.kv_type = c.kv_type;
    a.n_kv = c.n_kv;
    a.n_heads = c.n_heads;
    a.n_kv_heads = c.n_kv_heads;
    a.head_dim = c.head_dim;
    a.kv_stride = kv_stride;
    a.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    a.out = out;
    return a;
  }
};

// Stores element i (kv, vv) in the problem's cache type. Q8_0 only takes the floats here:
// encode_q8 (after the last store) turns them into blocks and the values those decode to.
void store_kv(AttnProblem& p, size_t i, float kv, float vv) {
  if (p.c.kv_type == DType::kQ8_0) {
    p.k[i] = kv;
    p.v[i] = vv;
  } else if (p.c.kv_type == DType::kF16) {
    p.k16[i] = f32_to_fp16(kv);
    p.v16[i] = f32_to_fp16(vv);
    p.k[i] = fp16_to_f32(p.k16[i]);
    p.v[i] = fp16_to_f32(p.v16[i]);
  } else {
    p.k32[i] = p.k[i] = kv;
    p.v32[i] = p.v[i] = vv;
  }
}

// Q8_0: encodes every position's blocks (not the padding's) from the floats in p.k / p.v,
// which then become the values the blocks decode to. Other types: nothing to do.
void encode_q8(AttnProblem& p) {
  if (p.c.kv_type != DType::kQ8_0) return;
  const int64_t row = p.c.n_kv_heads * p.c.head_dim;
  for (auto [floats, blocks] : {std::pair{&p.k, &p.k8}, std::pair{&p.v, &p.v8}}) {
    for (int64_t t = 0; t < p.c.n_kv; ++t) {
      float* x = floats->data() + t * p.kv_stride;
      BlockQ8_0* b = blocks->data() + t * p.kv_stride / kQK;
      quantize_row_q8_0(x, b, row);
      dequantize_row_q8_0(b, x, row);
    }
  }
}

AttnProblem make_problem(const AttnCase& c, Rng& rng) {
  AttnProblem p;
  p.c = c;
  p.kv_stride = c.n_kv_heads * c.head_dim + c.pad;
  p.q = random_vec(rng, c.n_heads * c.head_dim, -c.q_range, c.q_range);
  const size_t total = static_cast<size_t>(c.n_kv * p.kv_stride);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  p.k.assign(total, nan);
  p.v.assign(total, nan);
  if (c.kv_type == DType::kF16) {
    p.k16.assign(total, 0x7e00);
    p.v16.assign(total, 0x7e00);
  } else if (c.kv_type == DType::kQ8_0) {
    BlockQ8_0 nan_block{};
    nan_block.d = 0x7e00;
    p.k8.assign(total / kQK, nan_block);
    p.v8.assign(total / kQK, nan_block);
  } else {
    p.k32.assign(total, nan);
    p.v32.assign(total, nan);
  }
  for (int64_t t = 0; t < c.n_kv; ++t) {
    for (int64_t i = 0; i < c.n_kv_heads * c.head_dim; ++i) {
      store_kv(p, static_cast<size_t>(t * p.kv_stride + i), rng.uniform_f32(-c.q_range, c.q_range),
               rng.uniform_f32(-1.0f, 1.0f));
    }
  }
  encode_q8(p);
  return p;
}

std::vector<float> brute_force(const AttnProblem& p) {
  const AttnCase& c = p.c;
  const int64_t group = c.n_heads / c.n_kv_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
  std::vector<float> out(static_cast<size_t>(c.n_heads * c.head_dim));
  std::vector<double> s(static_cast<size_t>(c.n_kv));
  for (int64_t h = 0; h < c.n_heads; ++h) {
    const int64_t off = (h / group) * c.head_dim;
    double mx = -1e300;
    for (int64_t t = 0; t < c.n_kv; ++t) {
      double dot = 0.0;
      for (int64_t d = 0; d < c.head_dim; ++d) {
        dot += double{p.q[static_cast<size_t>(h * c.head_dim + d)]} *
               p.k[static_cast<size_t>(t * p.kv_stride + off + d)];
      }
      s[static_cast<size_t>(t)] = dot * static_cast<double>(static_cast<float>(scale));
      mx = std::max(mx, s[static_cast<size_t>(t)]);
    }
    double sum = 0.0;
    for (double& x : s) {
      x = std::exp(x - mx);
      sum += x;
    }
    for (int64_t d = 0; d < c.head_dim; ++d) {
      double acc = 0.0;
      for (int64_t t = 0; t < c.n_kv; ++t) {
        acc += s[static_cast<size_t>(t)] * p.v[static_cast<size_t>(t * p.kv_stride + off + d)];
      }
      out[static_cast<size_t>(h * c.head_dim + d)] = static_cast<float>(acc / sum);
    }
  }
  return out;
}

std::vector<float> run_attention(const KernelTable& t, const AttnProblem& p) {
  std::vector<float> out(static_cast<size_t>(p.c.n_heads * p.c.head_dim), 12345.0f);
  std::vector<float> scratch(static_cast<size_t>(p.c.n_kv) + 1);
  t.attention(p.args(out.data()), 0, p.c.n_heads, scratch.data());
  return out;
}

std::vector<AttnCase> attention_cases() {
  std::vector<AttnCase> cases;
  for (DType type : kKvTypes) {
    for (int64_t hd : head_dims_for(type, {8, 64, 128, 12, 32})) {
      for (int64_t n_kv : {1, 2, 17, 300, 5000}) {
        AttnCase c;
        c.kv_type = type;
        c.head_dim = hd;
        c.n_kv = n_kv;
        cases.push_back(c);
      }
    }
    // Other head layouts: no GQA, MQA with many heads, padded stride, peaky scores.
    cases.push_back({4, 4, 64, 129, 0, type, 1.0f});
    if (type == DType::kQ8_0) {  // whole blocks only: padding and head dims of 32s
      cases.push_back({20, 1, 64, 77, 0, type, 1.0f});
      cases.push_back({6, 3, 96, 65, 32, type, 1.0f});
      cases.push_back({8, 2, 64, 1000, 32, type, 1.0f});
      cases.push_back({7, 7, 160, 33, 64, type, 1.0f});
      cases.push_back({8, 2, 64, 700, 0, type, 4.0f});
      cases.push_back({12, 4, 544, 50, 32, type, 1.0f});  // above the tiled path's head_dim
      continue;
    }
    cases.push_back({20, 1, 64, 77, 0, type, 1.0f});
    cases.push_back({6, 3, 24, 65, 8, type, 1.0f});
    cases.push_back({8, 2, 64, 1000, 16, type, 1.0f});
    cases.push_back({7, 7, 40, 33, 3, type, 1.0f});
    cases.push_back({8, 2, 64, 700, 0, type, 4.0f});
    cases.push_back({12, 4, 520, 50, 0, type, 1.0f});  // above the tiled path's head_dim
  }
  return cases;
}

TEST(Attention, ReferenceMatchesDoubleBruteForce) {
  Rng rng(10);
  for (const AttnCase& c : attention_cases()) {
    const AttnProblem p = make_problem(c, rng);
    const std::vector<float> got = run_attention(reference(), p);
    const std::vector<float> want = brute_force(p);
    const double tol = c.q_range > 1.0f ? 2e-5 : 1e-5;
    expect_close(got, want, 0.0, tol, "ref vs double, " + describe(c));
  }
}

TEST(Attention, EveryTableMatchesReference) {
  Rng rng(11);
  for (const AttnCase& c : attention_cases()) {
    const AttnProblem p = make_problem(c, rng);
    const std::vector<float> want = run_attention(reference(), p);
    for (const KernelTable* t : tables()) {
      const std::vector<float> got = run_attention(*t, p);
      const double tol = c.q_range > 1.0f ? 5e-5 : 2e-5;
      expect_close(got, want, 0.0, tol, std::string(t->isa) + ", " + describe(c));
    }
  }
}

TEST(Attention, GqaReadsKvHeadOfGroup) {
  // 8 query heads over 2 KV heads: heads 0-3 read KV head 0, heads 4-7 KV head 1. V of KV
  // head g is the same at every position, (g + 1) * 10 + d, so whatever the softmax weights,
  // head h outputs exactly that row (as the cache holds it: Q8_0 rounds it).
  for (DType type : kKvTypes) {
    for (int64_t hd : head_dims_for(type, {8, 64, 12})) {
      Rng rng(12);
      AttnCase c;
      c.kv_type = type;
      c.head_dim = hd;
      c.n_kv = 37;
      AttnProblem p = make_problem(c, rng);
      for (int64_t t = 0; t < c.n_kv; ++t) {
        for (int64_t g = 0; g < 2; ++g) {
          for (int64_t d = 0; d < hd; ++d) {
            const size_t i = static_cast<size_t>(t * p.kv_stride + g * hd + d);
            store_kv(p, i, p.k[i], static_cast<float>((g + 1) * 10 + d));
          }
        }
      }
      encode_q8(p);
      for (const KernelTable* t : tables()) {
        const std::vector<float> out = run_attention(*t, p);
        for (int64_t h = 0; h < 8; ++h) {
          for (int64_t d = 0; d < hd; ++d) {
            const float row = p.v[static_cast<size_t>((h / 4) * hd + d)];
            // Q8_0: within half a step of a block whose largest value is below 20 + hd.
            EXPECT_NEAR(row, (h / 4 + 1) * 10 + d, type == DType::kQ8_0 ? (20.0 + hd) / 254 : 1e-3);
            EXPECT_NEAR(out[static_cast<size_t>(h * hd + d)], row, 1e-3)
                << t->isa << " head " << h << " dim " << d << " hd " << hd << " "
                << dtype_name(type);
          }
        }
      }
    }
  }
}

// Per-head limits (the rows of one prompt chunk sharing a pass over the cache): each head's
// result has the bits of a call for that head alone over its own positions, for both the
// tiled path (head_dim 64, limits around tile edges) and the generic one (head_dim 12).
TEST(Attention, PerHeadLimitsEqualSingleHeadCalls) {
  Rng rng(17);
  for (DType type : kKvTypes) {
    for (int64_t hd : head_dims_for(type, {64, 12})) {
      AttnCase c;
      c.n_heads = 10;
      c.n_kv_heads = 1;
      c.kv_type = type;
      c.head_dim = hd;
      c.n_kv = 200;
      const AttnProblem p = make_problem(c, rng);
      const std::vector<int64_t> limits = {200, 1, 64, 65, 100, 129, 7, 8, 9, 128};
      for (const KernelTable* t : tables()) {
        std::vector<float> batched(static_cast<size_t>(c.n_heads * hd), 12345.0f);
        std::vector<float> scratch(static_cast<size_t>(c.n_kv) + 1);
        AttentionArgs a = p.args(batched.data());
        a.n_kv_of_head = limits.data();
        t->attention(a, 0, c.n_heads, scratch.data());
        for (int64_t h = 0; h < c.n_heads; ++h) {
          std::vector<float> alone(static_cast<size_t>(hd), 12345.0f);
          AttentionArgs one = p.args(alone.data());
          one.q = p.q.data() + h * hd;
          one.n_heads = 1;
          one.n_kv = limits[static_cast<size_t>(h)];
          t->attention(one, 0, 1, scratch.data());
          EXPECT_EQ(
              std::memcmp(alone.data(), batched.data() + h * hd, alone.size() * sizeof(float)), 0)
              << t->isa << " head " << h << " limit " << limits[static_cast<size_t>(h)] << " hd "
              << hd;
        }
        // And a limit of one position is that position's value exactly (weight 1).
        for (int64_t d = 0; d < hd; ++d) {
          EXPECT_NEAR(batched[static_cast<size_t>(hd + d)], p.v[static_cast<size_t>(d)], 1e-6)
              << t->isa;
        }
      }
    }
  }
}

TEST(Attention, HeadRangeComputesOnlyThoseHeads) {
  Rng rng(13);
  for (DType type : kKvTypes) {
    for (int64_t hd : head_dims_for(type, {64, 12})) {
      AttnCase c;
      c.kv_type = type;
      c.head_dim = hd;
      c.n_kv = 150;
      const AttnProblem p = make_problem(c, rng);
      for (const KernelTable* t : tables()) {
        const std::vector<float> full = run_attention(*t, p);
        for (auto [b, e] : {std::pair<int64_t, int64_t>{3, 6}, {0, 1}, {7, 8}, {2, 2}, {4, 8}}) {
          std::vector<float> out(full.size(), 12345.0f);
          std::vector<float> scratch(static_cast<size_t>(c.n_kv));
          t->attention(p.args(out.data()), b, e, scratch.data());
          for (int64_t h = 0; h < c.n_heads; ++h) {
            for (int64_t d = 0; d < hd; ++d) {
              const size_t i = static_cast<size_t>(h * hd + d);
              if (h >= b && h < e) {
                EXPECT_EQ(out[i], full[i]) << t->isa << " range " << b << ".." << e;
              } else {
                EXPECT_EQ(out[i], 12345.0f) << t->isa << " range " << b << ".." << e;
              }
            }
          }
        }
      }
    }
  }
}

TEST(Attention, GrowingScoresRescaleCorrectly) {
  // Scores rise along the sequence so the running max grows in every tile, and span a
  // range wide enough that early positions underflow to zero weight.
  for (DType type : kKvTypes) {
    for (int64_t hd : head_dims_for(type, {8, 64, 128})) {
      Rng rng(14);
      AttnCase c;
      c.kv_type = type;
      c.head_dim = hd;
      c.n_kv = 3000;
      AttnProblem p = make_problem(c, rng);
      for (float& x : p.q) x = 1.0f;
      for (int64_t t = 0; t < c.n_kv; ++t) {
        for (int64_t i = 0; i < c.n_kv_heads * hd; ++i) {
          const size_t j = static_cast<size_t>(t * p.kv_stride + i);
          store_kv(p, j, static_cast<float>(t) * 0.04f / std::sqrt(static_cast<float>(hd)), p.v[j]);
        }
      }
      encode_q8(p);
      const std::vector<float> want = brute_force(p);
      for (const KernelTable* t : tables()) {
        // F16 keys make the scores coarse (~1e-3 relative at 120), so compare with a wider
        // margin; the point is that nothing drifts, overflows or turns NaN.
        expect_close(run_attention(*t, p), want, 0.0, 2e-3,
                     std::string(t->isa) + " growing, " + describe(c));
      }
    }
  }
}

}  // namespace
}  // namespace cohort::kernels
