// K-quant dot products (kernels/ref/vec_dot_k.cpp and the ISA variants) and matmul on
// K-quant weights.
//
// Tolerances. Every implementation computes the same exact integer sum per sub-block; they
// differ only in float rounding of the per-block scaling and of the sum over blocks. Those
// errors are relative to the magnitude of the terms, not of the result (the min term of
// Q2_K/Q4_K/Q5_K can cancel most of the scale term), so bounds are kRel times
// S = sum_i (|w_i| + 2 max|w| of its super-block) |a_i| over dequantized values, which bounds
// the sum of the absolute terms. Measured float error stays below 1e-8 S for every type and
// table; kRel = 1e-6 leaves 100x slack while one mis-decoded element (~S / n) still fails. Against
// f32 activations the extra error is the activation rounding, at most d_a / 2 per element: |sum_i
// w_i (a_i - a^_i)| <= sum over blocks of (d_a / 2) sum |w_i|.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/rng.h"
#include "core/thread_pool.h"
#include "kernel_test_util.h"
#include "kernels/kernels.h"
#include "kernels/matmul.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

namespace cohort::kernels {
namespace {

using testing::ops_of;
using testing::tables;

constexpr DType kKTypes[] = {DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K};
constexpr double kRel = 1e-6;

struct Row {
  std::vector<uint8_t> q;  // quantized
  std::vector<float> f;    // dequantized
};

Row quantize_k(DType t, const std::vector<float>& x) {
  const auto n = static_cast<int64_t>(x.size());
  Row r{std::vector<uint8_t>(row_bytes(t, n)), std::vector<float>(x.size())};
  quantize_row(t, x.data(), r.q.data(), n);
  dequantize_row(t, r.q.data(), r.f.data(), n);
  return r;
}

std::vector<float> random_row(Rng& rng, int64_t n, float scale, float offset) {
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = rng.normal() * scale + offset;
  return x;
}

struct Reference {
  double dot = 0;    // sum of w^_i a^_i in double
  double bound = 0;  // kRel * S (see the header comment)
};

Reference reference_dot(const std::vector<float>& w, const std::vector<float>& a) {
  Reference r;
  double s = 0;
  for (size_t b = 0; b < w.size(); b += kQK_K) {
    // A sub-block's offset is at most the largest |w| of its super-block (an element with
    // q = 0 decodes to -offset), so each scale term is at most |w_i| + that.
    double wmax = 0;
    for (size_t i = b; i < b + kQK_K; ++i) wmax = std::fmax(wmax, std::fabs(w[i]));
    for (size_t i = b; i < b + kQK_K; ++i) {
      r.dot += static_cast<double>(w[i]) * a[i];
      s += (std::fabs(w[i]) + 2.0 * wmax) * std::fabs(a[i]);
    }
  }
  r.bound = kRel * s + 1e-6;
  return r;
}

const char* name(DType t) { return dtype_name(t).data(); }

TEST(VecDotK, EveryTableHasEveryKType) {
  for (const KernelTable* k : tables()) {
    for (DType t : kKTypes) {
      const TypeOps& ops = ops_of(*k, t);
      EXPECT_EQ(ops.vec_dot_type, DType::kQ8_K) << k->isa << " " << name(t);
      EXPECT_NE(ops.vec_dot, nullptr) << k->isa << " " << name(t);
      EXPECT_NE(ops.from_float, nullptr) << k->isa << " " << name(t);
      EXPECT_NE(ops.to_float, nullptr) << k->isa << " " << name(t);
    }
    const TypeOps& q8k = ops_of(*k, DType::kQ8_K);
    EXPECT_NE(q8k.from_float, nullptr) << k->isa;
    EXPECT_NE(q8k.to_float, nullptr) << k->isa;
  }
}

// Every table quantizes activations to Q8_K with the reference's bits: random rows, and
// blocks of zeros, of exact ties (x * 127 / amax = k + 0.5), with NaN, with infinities, of
// denormals and of huge values.
TEST(VecDotK, Q8KActivationsAreBitIdenticalToReference) {
  const KernelTable& ref = reference();
  Rng rng(99);
  const int64_t n = 8 * kQK_K;
  std::vector<float> x = random_row(rng, n, 1.0f, 0.0f);
  std::fill(x.begin(), x.begin() + kQK_K, 0.0f);  // block 0: all zero
  x[kQK_K + 1] = -0.0f;
  for (int e = 0; e < kQK_K; ++e) {  // block 1: amax 127, every code a tie or an integer
    x[kQK_K + e] = static_cast<float>(e % 255 - 127) * (e % 2 ? 0.5f : 1.0f);
  }
  x[kQK_K + 5] = 127.0f;
  x[2 * kQK_K + 3] = std::numeric_limits<float>::quiet_NaN();  // block 2: NaN, also last
  x[3 * kQK_K - 1] = std::numeric_limits<float>::quiet_NaN();
  x[3 * kQK_K + 7] = std::numeric_limits<float>::infinity();  // block 3: +inf and -inf
  x[3 * kQK_K + 9] = -std::numeric_limits<float>::infinity();
  for (int e = 0; e < kQK_K; ++e) {  // block 4: denormals; block 5: huge
    x[4 * kQK_K + e] = std::numeric_limits<float>::denorm_min() * static_cast<float>(e - 100);
    x[5 * kQK_K + e] = 3e38f * (e % 3 ? 1.0f : -0.7f);
  }
  const size_t bytes = row_bytes(DType::kQ8_K, n);
  std::vector<uint8_t> want(bytes);
  ops_of(ref, DType::kQ8_K).from_float(x.data(), want.data(), n);
  for (const KernelTable* k : tables()) {
    std::vector<uint8_t> got(bytes, 0xAB);
    ops_of(*k, DType::kQ8_K).from_float(x.data(), got.data(), n);
    for (int64_t b = 0; b < n / kQK_K; ++b) {
      const size_t at = static_cast<size_t>(b) * sizeof(BlockQ8_K);
      EXPECT_EQ(std::memcmp(want.data() + at, got.data() + at, sizeof(BlockQ8_K)), 0)
          << k->isa << " block " << b;
    }
  }
}

// Every table's vec_dot agrees with the exact dot of the dequantized operands (which also
// proves vec_dot and dequantize read the same layout), and with the reference kernel.
TEST(VecDotK, AgreesWithDequantizedDotAndReference) {
  const KernelTable& ref = reference();
  Rng rng(1234);
  for (const int64_t n : {256, 512, 4096, 4096 + 256}) {
    for (DType t : kKTypes) {
      for (int rep = 0; rep < 4; ++rep) {
        // Weight rows centred and off-centre (large min terms), activations with outliers.
        const float offset = rep % 2 ? 0.03f : 0.0f;
        const Row w = quantize_k(t, random_row(rng, n, 0.02f, offset));
        std::vector<float> af = random_row(rng, n, 1.0f, 0.0f);
        af[static_cast<size_t>(rep * 37 % n)] = 20.0f;
        std::vector<uint8_t> aq(row_bytes(DType::kQ8_K, n));
        ops_of(ref, DType::kQ8_K).from_float(af.data(), aq.data(), n);
        std::vector<float> adq(static_cast<size_t>(n));
        dequantize_row_q8_k(aq.data(), adq.data(), n);

        const Reference r = reference_dot(w.f, adq);
        const float ref_dot = ops_of(ref, t).vec_dot(n, w.q.data(), aq.data());
        EXPECT_NEAR(ref_dot, r.dot, r.bound) << "ref " << name(t) << " n=" << n;
        for (const KernelTable* k : tables()) {
          const float got = ops_of(*k, t).vec_dot(n, w.q.data(), aq.data());
          EXPECT_NEAR(got, r.dot, r.bound) << k->isa << " " << name(t) << " n=" << n;
          EXPECT_NEAR(got, ref_dot, r.bound) << k->isa << " vs ref " << name(t) << " n=" << n;
        }

        // Against f32 activations: the activation rounding bound.
        double f32_dot = 0, act_bound = 0;
        for (int64_t b = 0; b < n / kQK_K; ++b) {
          float amax = 0;
          double wabs = 0;
          for (int64_t i = b * kQK_K; i < (b + 1) * kQK_K; ++i) {
            const auto u = static_cast<size_t>(i);
            amax = std::fmax(amax, std::fabs(af[u]));
            wabs += std::fabs(w.f[u]);
            f32_dot += static_cast<double>(w.f[u]) * af[u];
          }
          act_bound += amax / 127.0 / 2.0 * 1.0001 * wabs;
        }
        EXPECT_NEAR(ref_dot, f32_dot, act_bound + r.bound) << name(t) << " n=" << n;
      }
    }
  }
}

// Hand-made extremes: every weight quant and every activation at its largest magnitude, so
// any int16 saturation or lost sign in a SIMD path shows.
TEST(VecDotK, ExtremeValuesMatchReference) {
  const KernelTable& ref = reference();
  const int64_t n = 512;
  for (DType t : kKTypes) {
    for (int pattern = 0; pattern < 4; ++pattern) {
      std::vector<uint8_t> w(row_bytes(t, n));
      std::memset(w.data(), pattern < 2 ? 0xFF : 0x00, w.size());
      // Put sane half scales in place (0xFFFF would be NaN): every type ends with d (and
      // Q2_K with dmin) or starts with d, dmin.
      const size_t bb = dtype_info(t).block_bytes;
      for (size_t b = 0; b < w.size() / bb; ++b) {
        uint8_t* p = w.data() + b * bb;
        const uint16_t one = 0x3C00, half = 0x3800;
        if (t == DType::kQ4_K || t == DType::kQ5_K) {
          std::memcpy(p, &one, 2);
          std::memcpy(p + 2, &half, 2);
        } else if (t == DType::kQ2_K) {
          std::memcpy(p + bb - 4, &one, 2);
          std::memcpy(p + bb - 2, &half, 2);
        } else {
          std::memcpy(p + bb - 2, &one, 2);
        }
      }
      std::vector<BlockQ8_K> a(static_cast<size_t>(n / kQK_K));
      for (auto& blk : a) {
        blk.d = 0.5f;
        for (int e = 0; e < kQK_K; ++e) {
          blk.qs[e] = static_cast<int8_t>(pattern % 2 ? -127 : (e % 3 ? 127 : -127));
        }
        for (int g = 0; g < 16; ++g) {
          int s = 0;
          for (int l = 0; l < 16; ++l) s += blk.qs[16 * g + l];
          blk.bsums[g] = static_cast<int16_t>(s);
        }
      }
      std::vector<float> wf(static_cast<size_t>(n)), af(static_cast<size_t>(n));
      dequantize_row(t, w.data(), wf.data(), n);
      dequantize_row_q8_k(a.data(), af.data(), n);
      const Reference r = reference_dot(wf, af);
      for (const KernelTable* k : tables()) {
        const float got = ops_of(*k, t).vec_dot(n, w.data(), a.data());
        EXPECT_NEAR(got, r.dot, r.bound) << k->isa << " " << name(t) << " pattern " << pattern;
      }
      (void)ref;
    }
  }
}

// matmul on 2 threads equals a naive loop over to_float rows and the quantized activations.
TEST(VecDotK, MatmulMatchesNaiveLoop) {
  ThreadPool pool(2);
  Rng rng(99);
  const int64_t rows = 37, cols = 512, x_stride = cols + 5;
  for (DType t : {DType::kQ4_K, DType::kQ6_K}) {
    std::vector<uint8_t> wq(row_bytes(t, cols) * rows);
    std::vector<float> wf(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<float> x = random_row(rng, cols, 0.02f, r % 3 ? 0.0f : 0.01f);
      quantize_row(t, x.data(), wq.data() + row_bytes(t, cols) * r, cols);
      dequantize_row(t, wq.data() + row_bytes(t, cols) * r, wf.data() + r * cols, cols);
    }
    const WeightMatrix w{wq.data(), t, rows, cols, row_bytes(t, cols)};
    for (const int64_t n_tokens : {1, 3}) {
      const std::vector<float> x = random_row(rng, n_tokens * x_stride, 1.0f, 0.0f);
      for (const KernelTable* k : tables()) {
        std::vector<uint8_t> ws(matmul_workspace_bytes(*k, w, n_tokens));
        std::vector<float> y(static_cast<size_t>(n_tokens * rows), NAN);
        matmul(*k, pool, w, x.data(), x_stride, n_tokens, y.data(), ws.data());
        for (int64_t tok = 0; tok < n_tokens; ++tok) {
          std::vector<uint8_t> aq(row_bytes(DType::kQ8_K, cols));
          std::vector<float> adq(static_cast<size_t>(cols));
          quantize_row_q8_k(x.data() + tok * x_stride, aq.data(), cols);
          dequantize_row_q8_k(aq.data(), adq.data(), cols);
          for (int64_t r = 0; r < rows; ++r) {
            const std::vector<float> wr(wf.begin() + r * cols, wf.begin() + (r + 1) * cols);
            const Reference ref = reference_dot(wr, adq);
            EXPECT_NEAR(y[static_cast<size_t>(tok * rows + r)], ref.dot, ref.bound)
                << k->isa << " " << name(t) << " token " << tok << " row " << r;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace cohort::kernels
