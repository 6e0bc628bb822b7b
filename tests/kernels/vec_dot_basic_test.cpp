// Dot products of the plain float types and the simple quants, for every kernel table this
// CPU can run, against the scalar reference table and against exact f32 arithmetic.
//
// Tolerances:
//  - A variant against the reference: |got - ref| <= 1e-5 * M, M = sum_i |w_i a_i| (+ sum
//    over blocks of |m_w s_a| for Q4_1/Q5_1, whose min term is summed separately). Integer
//    block dots are exact in both; what differs is float summation order (the reference
//    sums in double, AVX2 in 8-lane float accumulators of about n/16 or n/32 terms each),
//    worth about 1e-7 * (terms per lane) * M at worst, well under 1e-5 * M for n ~ 4k.
//  - A quantized dot against the exact dot of the dequantized weights with the f32
//    activations: the activation rounding, sum_i |w_i| |x_i - xq_i|, plus for the _1 types
//    the fp16 rounding of s (|m_w| |s| 2^-10 per block), plus 1e-5 * M for summation.
//  - Activation quantizers and f16 conversions: bit-identical to the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/fp16.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "kernel_test_util.h"
#include "kernels/kernels.h"
#include "kernels/matmul.h"
#include "tensor/dtype.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

namespace cohort::kernels {
namespace {

using testing::ops_of;
using testing::random_floats;
using testing::tables;

constexpr DType kTypes[] = {DType::kF32,  DType::kF16,  DType::kBF16, DType::kQ4_0,
                            DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kQ8_0};
constexpr double kSumTol = 1e-5;

bool is_float_type(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }
bool has_min(DType t) { return t == DType::kQ4_1 || t == DType::kQ5_1; }

std::vector<int64_t> vec_dot_lengths(DType t) {
  std::vector<int64_t> n = {32, 64, 96, 4096 + 32};
  if (is_float_type(t)) n.insert(n.end(), {1, 7, 8, 33, 40, 1001});
  return n;
}

std::vector<uint8_t> quantize(DType t, const float* x, int64_t n) {
  std::vector<uint8_t> y(row_bytes(t, n) + 1);  // + 1: never empty
  quantize_row(t, x, y.data(), n);
  return y;
}

// The activation vector as the weight type's vec_dot takes it, made by table k.
std::vector<uint8_t> activations(const KernelTable& k, DType wt, const float* x, int64_t n) {
  const DType at = ops_of(k, wt).vec_dot_type;
  std::vector<uint8_t> a(row_bytes(at, n) + 1);
  if (at == DType::kF32) {
    std::memcpy(a.data(), x, static_cast<size_t>(n) * sizeof(float));
  } else {
    ops_of(k, at).from_float(x, a.data(), n);
  }
  return a;
}

float min_of_block(DType t, const void* w, int64_t b) {
  if (t == DType::kQ4_1) return fp16_to_f32(static_cast<const BlockQ4_1*>(w)[b].m);
  return fp16_to_f32(static_cast<const BlockQ5_1*>(w)[b].m);
}

// Exact reference values for one weight row w (type t, n elements) against f32 x.
struct Expected {
  double exact = 0.0;      // sum_i dequant(w)_i * x_i
  double quant_dot = 0.0;  // sum_i dequant(w)_i * dequant(xq)_i (+ m s correction)
  double magnitude = 0.0;  // M of the header
  double quant_err = 0.0;  // bound on |vec_dot - exact| from activation quantization
};

Expected expected(DType t, const void* w, const float* x, int64_t n) {
  const KernelTable& ref = reference();
  const TypeOps& ops = ops_of(ref, t);
  std::vector<float> wf(static_cast<size_t>(n)), xq(static_cast<size_t>(n));
  ops.to_float(w, wf.data(), n);
  const std::vector<uint8_t> a = activations(ref, t, x, n);
  if (ops.vec_dot_type == DType::kF32) {
    std::memcpy(xq.data(), x, static_cast<size_t>(n) * sizeof(float));
  } else {
    ops_of(ref, ops.vec_dot_type).to_float(a.data(), xq.data(), n);
  }
  Expected e;
  for (int64_t i = 0; i < n; ++i) {
    e.exact += static_cast<double>(wf[i]) * x[i];
    e.quant_dot += static_cast<double>(wf[i]) * xq[i];
    e.magnitude += std::fabs(static_cast<double>(wf[i]) * xq[i]);
    e.quant_err += std::fabs(static_cast<double>(wf[i])) * std::fabs(x[i] - xq[i]);
  }
  if (has_min(t)) {
    // vec_dot uses m_w * s_a where the dequantized dot has m_w * sum(xq): s is fp16.
    const auto* blocks = reinterpret_cast<const BlockQ8_1*>(a.data());
    for (int64_t b = 0; b < n / kQK; ++b) {
      const double m = min_of_block(t, w, b), s = fp16_to_f32(blocks[b].s);
      double sum_xq = 0.0;
      for (int j = 0; j < kQK; ++j) sum_xq += xq[b * kQK + j];
      e.quant_dot += m * (s - sum_xq);
      e.magnitude += std::fabs(m * s);
      e.quant_err += std::fabs(m * s) * 0x1p-10;
    }
  }
  return e;
}

TEST(VecDotBasic, EveryTableFillsEveryType) {
  for (const KernelTable* k : tables()) {
    for (DType t : kTypes) {
      const TypeOps& ops = ops_of(*k, t);
      EXPECT_NE(ops.vec_dot, nullptr) << k->isa << " " << dtype_name(t);
      EXPECT_NE(ops.from_float, nullptr) << k->isa << " " << dtype_name(t);
      EXPECT_NE(ops.to_float, nullptr) << k->isa << " " << dtype_name(t);
      const DType at = ops.vec_dot_type;
      EXPECT_EQ(at, is_float_type(t) ? DType::kF32 : has_min(t) ? DType::kQ8_1 : DType::kQ8_0);
      EXPECT_NE(ops_of(*k, at).from_float, nullptr) << k->isa << " " << dtype_name(at);
      EXPECT_NE(ops_of(*k, at).to_float, nullptr) << k->isa << " " << dtype_name(at);
    }
  }
}

TEST(VecDotBasic, ReferenceMatchesExactArithmetic) {
  // The reference itself: the dot of the dequantized operands, summed exactly.
  const KernelTable& ref = reference();
  for (DType t : kTypes) {
    for (int64_t n : vec_dot_lengths(t)) {
      const std::vector<float> wx = random_floats(100 + n, n), x = random_floats(200 + n, n);
      const std::vector<uint8_t> w = quantize(t, wx.data(), n);
      const std::vector<uint8_t> a = activations(ref, t, x.data(), n);
      const Expected e = expected(t, w.data(), x.data(), n);
      const float got = ops_of(ref, t).vec_dot(n, w.data(), a.data());
      EXPECT_NEAR(got, e.quant_dot, 1e-6 * e.magnitude + 1e-30) << dtype_name(t) << " n=" << n;
    }
  }
}

TEST(VecDotBasic, EveryTableMatchesReference) {
  const KernelTable& ref = reference();
  for (const KernelTable* k : tables()) {
    double worst = 0.0;
    for (DType t : kTypes) {
      for (int64_t n : vec_dot_lengths(t)) {
        for (uint64_t seed = 0; seed < 3; ++seed) {
          const float scale = seed == 2 ? 1e-3f : 1.0f;
          const std::vector<float> wx = random_floats(seed * 7919 + n, n, scale);
          const std::vector<float> x = random_floats(seed * 104729 + n + 1, n);
          const std::vector<uint8_t> w = quantize(t, wx.data(), n);
          const std::vector<uint8_t> a = activations(ref, t, x.data(), n);
          const Expected e = expected(t, w.data(), x.data(), n);
          const float want = ops_of(ref, t).vec_dot(n, w.data(), a.data());
          const float got = ops_of(*k, t).vec_dot(n, w.data(), a.data());
          EXPECT_NEAR(got, want, kSumTol * e.magnitude + 1e-30)
              << k->isa << " " << dtype_name(t) << " n=" << n << " seed=" << seed;
          worst = std::max(worst, std::fabs(got - want) / e.magnitude);
        }
      }
    }
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.3g", worst);
    RecordProperty(std::string(k->isa) + "_worst_relative_error", buf);
  }
}

TEST(VecDotBasic, QuantizedDotIsCloseToExactF32Dot) {
  for (const KernelTable* k : tables()) {
    for (DType t : kTypes) {
      for (int64_t n : {int64_t{32}, int64_t{4096 + 32}}) {
        const std::vector<float> wx = random_floats(300 + n, n), x = random_floats(400 + n, n);
        const std::vector<uint8_t> w = quantize(t, wx.data(), n);
        const std::vector<uint8_t> a = activations(*k, t, x.data(), n);
        const Expected e = expected(t, w.data(), x.data(), n);
        const float got = ops_of(*k, t).vec_dot(n, w.data(), a.data());
        EXPECT_NEAR(got, e.exact, e.quant_err + kSumTol * e.magnitude)
            << k->isa << " " << dtype_name(t) << " n=" << n;
        // And the activation rounding is small: Q8 activations cost well under 1% of M.
        EXPECT_LE(e.quant_err, 0.01 * e.magnitude) << dtype_name(t);
      }
    }
  }
}

// Rows that stress the activation quantizer: exact .5 ties, tiny (fp16-subnormal) scales,
// zeros, a lone extreme, alternating signs, scales beyond the fp16 range.
std::vector<float> tricky_row(int64_t n) {
  Rng rng(99);
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t block = i / kQK, j = i % kQK;
    float v;
    switch (block % 6) {
      case 0:
        v = j == 0 ? 127.0f : std::floor(rng.uniform_f32(-254.0f, 254.0f)) * 0.5f;
        break;
      case 1:
        v = rng.normal() * 1e-6f;
        break;
      case 2:
        v = 0.0f;
        break;
      case 3:
        v = j == 9 ? -1000.0f : rng.normal();
        break;
      case 4:
        v = (j % 2 ? -1.0f : 1.0f) * (1.0f + static_cast<float>(j));
        break;
      default:
        v = rng.normal() * 1e7f;
        break;  // d overflows fp16 to inf
    }
    x[static_cast<size_t>(i)] = v;
  }
  return x;
}

TEST(VecDotBasic, ConversionsAreBitIdenticalToReference) {
  const KernelTable& ref = reference();
  const DType types[] = {DType::kF32,  DType::kF16,  DType::kBF16, DType::kQ4_0, DType::kQ4_1,
                         DType::kQ5_0, DType::kQ5_1, DType::kQ8_0, DType::kQ8_1};
  for (const KernelTable* k : tables()) {
    for (DType t : types) {
      for (int64_t n : {int64_t{32}, int64_t{160}, int64_t{256}, int64_t{4096 + 32}}) {
        for (const std::vector<float>& x : {random_floats(n, n), tricky_row(n)}) {
          const size_t bytes = row_bytes(t, n);
          std::vector<uint8_t> want(bytes), got(bytes, 0xAB);
          ops_of(ref, t).from_float(x.data(), want.data(), n);
          ops_of(*k, t).from_float(x.data(), got.data(), n);
          EXPECT_EQ(want, got) << k->isa << " from_float " << dtype_name(t) << " n=" << n;
          std::vector<float> yw(static_cast<size_t>(n)), yg(static_cast<size_t>(n), -1.0f);
          ops_of(ref, t).to_float(want.data(), yw.data(), n);
          ops_of(*k, t).to_float(want.data(), yg.data(), n);
          EXPECT_EQ(std::memcmp(yw.data(), yg.data(), yw.size() * sizeof(float)), 0)
              << k->isa << " to_float " << dtype_name(t) << " n=" << n;
        }
      }
    }
  }
}

// A Q8_0 weight byte of -128 is valid in a file; the dot must take it as -128.
TEST(VecDotBasic, Q8_0WeightMinus128) {
  BlockQ8_0 w[2];
  for (auto& b : w) {
    b.d = f32_to_fp16(0.5f);
    for (int j = 0; j < kQK; ++j) b.qs[j] = -128;
  }
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[i] = (i % 3 == 0 ? -1.0f : 1.0f) * static_cast<float>(i % 7);
  for (const KernelTable* k : tables()) {
    const std::vector<uint8_t> a = activations(*k, DType::kQ8_0, x.data(), 64);
    const Expected e = expected(DType::kQ8_0, w, x.data(), 64);
    const float got = ops_of(*k, DType::kQ8_0).vec_dot(64, w, a.data());
    EXPECT_NEAR(got, e.quant_dot, 1e-6 * e.magnitude) << k->isa;
  }
}

// One (row, token) product the way matmul computes it, for a batch of any size.
float direct_product(const KernelTable& k, DType t, int64_t n, const void* w, const void* a) {
  const TypeOps& ops = ops_of(k, t);
  if (ops.gemm == nullptr) return ops.vec_dot(n, w, a);
  float y = NAN;
  GemmArgs g;
  g.n = n;
  g.w = w;
  g.a = a;
  g.y = &y;
  ops.gemm(g, 0, 1, 0, 1);
  return y;
}

// kernels::matmul on two threads against a naive loop over rows: to_float of the weights,
// an f32 dot with the activations. Covers n_tokens 1, 3 and 9 (full gemm tiles), contiguous and
// strided activations, and a row slice of a column slice.
TEST(VecDotBasic, MatmulMatchesNaiveLoop) {
  ThreadPool pool(2);
  constexpr int64_t kRows = 37, kCols = 256;
  for (const KernelTable* k : tables()) {
    for (DType t : kTypes) {
      const size_t stride = row_bytes(t, kCols);
      std::vector<uint8_t> data(stride * kRows);
      for (int64_t r = 0; r < kRows; ++r) {
        const std::vector<float> wx = random_floats(500 + r, kCols, 0.5f);
        quantize_row(t, wx.data(), data.data() + r * stride, kCols);
      }
      const WeightMatrix full{data.data(), t, kRows, kCols, stride};
      const WeightMatrix slices[] = {full, full.row_slice(5, 30).col_slice(64, 192)};
      for (const WeightMatrix& w : slices) {
        const int64_t row0 = w.rows == kRows ? 0 : 5, col0 = w.cols == kCols ? 0 : 64;
        for (int64_t n_tokens : {1, 3, 9}) {
          for (int64_t x_stride : {w.cols, w.cols + 5}) {
            SCOPED_TRACE(std::string(k->isa) + " " + std::string(dtype_name(t)) +
                         " rows=" + std::to_string(w.rows) + " cols=" + std::to_string(w.cols) +
                         " tokens=" + std::to_string(n_tokens) +
                         " x_stride=" + std::to_string(x_stride));
            const std::vector<float> x = random_floats(600 + n_tokens, n_tokens * x_stride);
            std::vector<uint8_t> ws(matmul_workspace_bytes(*k, w, n_tokens) + 1);
            std::vector<float> y(static_cast<size_t>(n_tokens * w.rows), NAN);
            matmul(*k, pool, w, x.data(), x_stride, n_tokens, y.data(), ws.data());
            for (int64_t tok = 0; tok < n_tokens; ++tok) {
              const float* xt = x.data() + tok * x_stride;
              const std::vector<uint8_t> a = activations(*k, t, xt, w.cols);
              for (int64_t r = 0; r < w.rows; ++r) {
                const uint8_t* wr = static_cast<const uint8_t*>(w.data) + r * w.row_stride;
                const float got = y[tok * w.rows + r];
                // Same kernel, same operands: the same bits as a direct call (the batched
                // gemm where the type has one, whatever the batch, else vec_dot).
                EXPECT_EQ(got, direct_product(*k, t, w.cols, wr, a.data())) << "row " << r;
                // Naive: dequantize the full original row, take the slice's columns.
                std::vector<float> wf(kCols);
                ops_of(reference(), t)
                    .to_float(data.data() + (row0 + r) * stride, wf.data(), kCols);
                double naive = 0.0;
                for (int64_t c = 0; c < w.cols; ++c) naive += double{wf[col0 + c]} * xt[c];
                const Expected e = expected(t, wr, xt, w.cols);
                EXPECT_NEAR(naive, e.exact, 1e-9 * e.magnitude + 1e-30) << "row " << r;
                EXPECT_NEAR(got, naive, e.quant_err + kSumTol * e.magnitude) << "row " << r;
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace cohort::kernels
