// The batched products (TypeOps::gemm), for every kernel table this CPU can run, against the
// reference gemm (the reference vec_dot of each (row, token) pair), on random data with odd
// row and token counts so that every edge tile runs.
//
// Tolerance per pair: (n / W + 16) * 2^-24 * M, M = sum_i |w_i a_i| of that pair, W the
// elements one accumulator step covers (8 for F16, 32 for a quant block). The integer block
// dots are exact in both; what differs is the float summation: the SIMD gemm adds n / W
// terms into each of 8 lanes in order, then 3 levels of horizontal sum and the F16 scalar
// tail (< 8 terms), each addition rounding by at most 2^-24 relative, and the quantized
// term d_w * d_a * p rounds once more; the reference sums in double. The recursive-
// summation worst case is therefore below (n / W + 16) u M, u = 2^-24.
//
// Determinism: each pair's result does not depend on the row or token range of the call.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/rng.h"
#include "kernel_test_util.h"
#include "kernels/kernels.h"
#include "kernels/registry.h"
#include "tensor/dtype.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

namespace cohort::kernels {
namespace {

using testing::ops_of;
using testing::random_floats;
using testing::tables;

constexpr DType kGemmTypes[] = {DType::kF16, DType::kQ4_0, DType::kQ8_0, DType::kQ4_K,
                                DType::kQ6_K};

// Types the x86 tables pack (TypeOps::Packed): the batched ones, BF16 (packed as F16 is), Q4_1,
// Q5_0 and Q5_1 (as Q4_0 is), Q2_K, Q3_K and Q5_K; the reference table multiplies them a pair
// at a time.
constexpr DType kPackedTypes[] = {DType::kF16,  DType::kBF16, DType::kQ4_0, DType::kQ4_1,
                                  DType::kQ5_0, DType::kQ5_1, DType::kQ8_0, DType::kQ2_K,
                                  DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K};

// F16 and BF16: 16-bit floats, packed alike (F16x64).
bool is_half(DType t) { return t == DType::kF16 || t == DType::kBF16; }

bool is_k_quant(DType t) {
  return t == DType::kQ2_K || t == DType::kQ3_K || t == DType::kQ4_K || t == DType::kQ5_K ||
         t == DType::kQ6_K;
}

// The reference product of rows [r0, r1) and tokens [t0, t1): the reference vec_dot of each
// pair (what the reference table's gemm does, for types it has no gemm for too).
void reference_gemm(DType t, const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const TypeOps& ops = ops_of(reference(), t);
  const auto* w = static_cast<const uint8_t*>(g.w);
  const auto* a = static_cast<const uint8_t*>(g.a);
  for (int64_t j = t0; j < t1; ++j) {
    for (int64_t r = r0; r < r1; ++r) {
      g.y[j * g.y_stride + r] = ops.vec_dot(g.n, w + r * g.w_stride, a + j * g.a_stride);
    }
  }
}

// Sets how decode reads its weights (kernels::decode_in_pairs, decode_prefetch and
// decode_wide) for a scope, then puts back what they were. Mode bit 0: pairs, bit 1: prefetch,
// bit 2: the AVX-512 Q4_0, Q8_0 and F16 one-token tiles in 512-bit registers and runs of
// blocks, the Q6_K one with a super-block's steps unrolled.
class DecodeReads {
 public:
  explicit DecodeReads(int mode)
      : pairs_(decode_in_pairs()), prefetch_(decode_prefetch()), wide_(decode_wide()) {
    set_decode_in_pairs(mode & 1);
    set_decode_prefetch(mode & 2);
    set_decode_wide(mode & 4);
  }
  ~DecodeReads() {
    set_decode_in_pairs(pairs_);
    set_decode_prefetch(prefetch_);
    set_decode_wide(wide_);
  }
  DecodeReads(const DecodeReads&) = delete;
  DecodeReads& operator=(const DecodeReads&) = delete;

 private:
  bool pairs_, prefetch_, wide_;
};

// Every DecodeReads mode.
constexpr int kDecodeReadModes[] = {0, 1, 2, 3, 4, 5, 6, 7};

// rows x n weights of type t and tokens x n activations in its vec_dot_type (made by the
// reference table, so every table multiplies the same operands), with padding between
// rows and between tokens to check the strides.
struct Problem {
  DType type;
  int64_t n, rows, tokens;
  size_t w_stride, a_stride;
  std::vector<uint8_t> w, a;
  std::vector<float> wf, af;  // dequantized, for M

  Problem(DType t, int64_t n_, int64_t rows_, int64_t tokens_, uint64_t seed, float scale)
      : type(t), n(n_), rows(rows_), tokens(tokens_) {
    const DType at = ops_of(reference(), t).vec_dot_type;
    w_stride = row_bytes(t, n) + 6;
    a_stride = row_bytes(at, n) + 8;  // keeps f32 activations 4-byte aligned
    w.assign(w_stride * rows, 0xCD);
    a.assign(a_stride * tokens, 0xCD);
    wf.resize(static_cast<size_t>(rows * n));
    af.resize(static_cast<size_t>(tokens * n));
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<float> x = random_floats(seed * 1000 + r, n, scale);
      quantize_row(t, x.data(), w.data() + r * w_stride, n);
      ops_of(reference(), t).to_float(w.data() + r * w_stride, &wf[r * n], n);
    }
    for (int64_t j = 0; j < tokens; ++j) {
      const std::vector<float> x = random_floats(seed * 1000 + 500 + j, n, 1.0f);
      if (at == DType::kF32) {
        std::memcpy(a.data() + j * a_stride, x.data(), static_cast<size_t>(n) * sizeof(float));
      } else {
        ops_of(reference(), at).from_float(x.data(), a.data() + j * a_stride, n);
      }
      ops_of(reference(), at).to_float(a.data() + j * a_stride, &af[j * n], n);
    }
  }

  GemmArgs args(float* y) const {
    GemmArgs g;
    g.n = n;
    g.w = w.data();
    g.w_stride = w_stride;
    g.a = a.data();
    g.a_stride = a_stride;
    g.y = y;
    g.y_stride = rows + 3;  // y rows padded too: the padding must stay untouched
    return g;
  }
  size_t y_size() const { return static_cast<size_t>(tokens * (rows + 3)); }

  double magnitude(int64_t r, int64_t j) const {
    double m = 0.0;
    for (int64_t i = 0; i < n; ++i) m += std::fabs(double{wf[r * n + i]} * af[j * n + i]);
    return m;
  }
};

// got against want for every (row, token) of p: within tol_per_m x that pair's magnitude,
// and the padding rows of y (NaN before the call) untouched.
void expect_within_tolerance(const Problem& p, const std::vector<float>& want,
                             const std::vector<float>& got, double tol_per_m) {
  for (int64_t j = 0; j < p.tokens; ++j) {
    for (int64_t r = 0; r < p.rows + 3; ++r) {
      const float g = got[j * (p.rows + 3) + r];
      if (r >= p.rows) {
        EXPECT_TRUE(std::isnan(g)) << "padding written at token " << j << " row " << r;
        continue;
      }
      EXPECT_NEAR(g, want[j * (p.rows + 3) + r], tol_per_m * p.magnitude(r, j) + 1e-30)
          << "token " << j << " row " << r;
    }
  }
}

std::vector<int64_t> gemm_lengths(DType t) {
  if (is_half(t)) return {1, 7, 8, 33, 264, 1001, 4096 + 32, 4096 + 13};
  if (is_k_quant(t)) return {256, 768, 4096 + 256};
  return {32, 96, 288, 4096 + 32};
}

TEST(Gemm, EveryTableHasGemmForTheBatchedTypes) {
  for (const KernelTable* k : tables()) {
    for (DType t : kGemmTypes) EXPECT_NE(ops_of(*k, t).gemm, nullptr) << k->isa;
  }
}

TEST(Gemm, EveryTableMatchesReference) {
  for (const KernelTable* k : tables()) {
    for (DType t : kGemmTypes) {
      const double w_elems = t == DType::kF16 ? 8.0 : 32.0;
      for (int64_t n : gemm_lengths(t)) {
        for (const auto& [rows, tokens] : {std::pair<int64_t, int64_t>{1, 2}, {7, 5}, {13, 9}}) {
          const float scale = n % 2 ? 1e-3f : 1.0f;
          const Problem p(t, n, rows, tokens, static_cast<uint64_t>(n + rows), scale);
          SCOPED_TRACE(std::string(k->isa) + " " + std::string(dtype_name(t)) +
                       " n=" + std::to_string(n) + " rows=" + std::to_string(rows) +
                       " tokens=" + std::to_string(tokens));
          std::vector<float> want(p.y_size(), NAN), got(p.y_size(), NAN);
          ops_of(reference(), t).gemm(p.args(want.data()), 0, rows, 0, tokens);
          ops_of(*k, t).gemm(p.args(got.data()), 0, rows, 0, tokens);
          const double tol_per_m = (static_cast<double>(n) / w_elems + 16) * 0x1p-24;
          expect_within_tolerance(p, want, got, tol_per_m);
        }
      }
    }
  }
}

// Sub-ranges of rows and tokens, called in pieces as threads would, give the same bits as
// one call over everything, and write nothing outside their range.
TEST(Gemm, ResultsDoNotDependOnTheRanges) {
  for (const KernelTable* k : tables()) {
    for (DType t : kGemmTypes) {
      const int64_t n = t == DType::kF16 ? 203 : is_k_quant(t) ? 512 : 160, rows = 11, tokens = 10;
      const Problem p(t, n, rows, tokens, 7, 1.0f);
      std::vector<float> whole(p.y_size(), NAN), pieces(p.y_size(), NAN);
      const TypeOps& ops = ops_of(*k, t);
      ops.gemm(p.args(whole.data()), 0, rows, 0, tokens);
      const int64_t row_cuts[] = {0, 1, 6, 11}, token_cuts[] = {0, 3, 4, 10};
      for (int ri = 0; ri < 3; ++ri) {
        for (int ti = 0; ti < 3; ++ti) {
          ops.gemm(p.args(pieces.data()), row_cuts[ri], row_cuts[ri + 1], token_cuts[ti],
                   token_cuts[ti + 1]);
        }
      }
      EXPECT_EQ(std::memcmp(whole.data(), pieces.data(), whole.size() * sizeof(float)), 0)
          << k->isa << " " << dtype_name(t);
      std::vector<float> one(p.y_size(), NAN);
      ops.gemm(p.args(one.data()), 4, 5, 2, 3);
      for (size_t i = 0; i < one.size(); ++i) {
        if (i == static_cast<size_t>(2 * (rows + 3) + 4)) {
          EXPECT_EQ(one[i], whole[i]) << k->isa << " " << dtype_name(t);
        } else {
          EXPECT_TRUE(std::isnan(one[i])) << k->isa << " " << dtype_name(t) << " at " << i;
        }
      }
    }
  }
}

// A prompt's tokens (many per call: the prompt paths, e.g. F16's cache-blocked form for long
// rows) get the same bits as each token alone (the decode path), so batching never changes
// a token's result. Long rows with a tail, more rows than one row block.
TEST(Gemm, PromptCallEqualsOneTokenAtATime) {
  for (const KernelTable* k : tables()) {
    for (DType t : kGemmTypes) {
      const int64_t n = t == DType::kF16 ? 8192 + 37 : is_k_quant(t) ? 8192 : 8192 + 32;
      const int64_t rows = 53, tokens = 13;
      const Problem p(t, n, rows, tokens, 5, 1.0f);
      std::vector<float> prompt(p.y_size(), NAN), single(p.y_size(), NAN);
      const TypeOps& ops = ops_of(*k, t);
      ops.gemm(p.args(prompt.data()), 0, rows, 0, tokens);
      for (int64_t j = 0; j < tokens; ++j) ops.gemm(p.args(single.data()), 0, rows, j, j + 1);
      EXPECT_EQ(std::memcmp(prompt.data(), single.data(), prompt.size() * sizeof(float)), 0)
          << k->isa << " " << dtype_name(t);
    }
  }
}

// A Q8_0 weight byte of -128 is valid in a file; the gemm must take it as -128.
TEST(Gemm, Q8_0WeightMinus128) {
  const Problem base(DType::kQ8_0, 64, 3, 5, 11, 1.0f);
  Problem p = base;
  for (int64_t r = 0; r < p.rows; ++r) {
    auto* qs = p.w.data() + r * p.w_stride;
    for (int b = 0; b < 2; ++b) std::memset(qs + b * 34 + 2, 0x80, 32);  // every code -128
    ops_of(reference(), DType::kQ8_0).to_float(qs, &p.wf[r * p.n], p.n);
  }
  for (const KernelTable* k : tables()) {
    std::vector<float> want(p.y_size(), NAN), got(p.y_size(), NAN);
    ops_of(reference(), DType::kQ8_0).gemm(p.args(want.data()), 0, p.rows, 0, p.tokens);
    ops_of(*k, DType::kQ8_0).gemm(p.args(got.data()), 0, p.rows, 0, p.tokens);
    for (int64_t j = 0; j < p.tokens; ++j) {
      for (int64_t r = 0; r < p.rows; ++r) {
        const double tol = (64.0 / 32 + 16) * 0x1p-24 * p.magnitude(r, j);
        EXPECT_NEAR(got[j * (p.rows + 3) + r], want[j * (p.rows + 3) + r], tol) << k->isa;
      }
    }
  }
}

// ---- Packed layouts (TypeOps::Packed): the same products from weights packed in panels.

// p's weights packed by table k (rows padded to whole panels), and args reading them.
struct PackedProblem {
  const Problem& p;
  const TypeOps::Packed& form;
  std::vector<uint8_t> panels;

  PackedProblem(const Problem& problem, const KernelTable& k)
      : p(problem), form(ops_of(k, problem.type).packed) {
    const int64_t n_panels = (p.rows + form.panel_rows - 1) / form.panel_rows;
    const size_t bytes = form.panel_bytes(p.n);
    panels.assign(bytes * n_panels, 0xCD);
    for (int64_t i = 0; i < n_panels; ++i) {
      const int64_t r0 = i * form.panel_rows;
      form.pack_panel(p.w.data() + r0 * p.w_stride, p.w_stride,
                      std::min(form.panel_rows, p.rows - r0), p.n, panels.data() + i * bytes);
    }
  }
  GemmArgs args(float* y) const {
    GemmArgs g = p.args(y);
    g.w = panels.data();
    g.w_stride = form.panel_bytes(p.n);
    return g;
  }
};

// Elements one accumulator step of the packed form covers (see the tolerance above): F16
// panels add one product per step, the quantized ones a block's integer dot.
double packed_step_elems(DType t) { return is_half(t) ? 1.0 : 32.0; }

TEST(PackedGemm, MatchesReferenceAndLeavesPaddingAlone) {
  int forms = 0;
  for (const KernelTable* k : tables()) {
    for (DType t : kPackedTypes) {
      if (ops_of(*k, t).packed.panel_rows == 0) continue;
      ++forms;
      for (int64_t n : gemm_lengths(t)) {
        if (n % dtype_info(t).block_elems != 0) continue;
        for (const auto& [rows, tokens] : {std::pair<int64_t, int64_t>{1, 2}, {8, 5}, {21, 9}}) {
          const float scale = n % 64 ? 1e-3f : 1.0f;
          const Problem p(t, n, rows, tokens, static_cast<uint64_t>(n + rows), scale);
          const PackedProblem pp(p, *k);
          SCOPED_TRACE(std::string(k->isa) + " " + std::string(dtype_name(t)) +
                       " n=" + std::to_string(n) + " rows=" + std::to_string(rows) +
                       " tokens=" + std::to_string(tokens));
          std::vector<float> want(p.y_size(), NAN), got(p.y_size(), NAN);
          reference_gemm(t, p.args(want.data()), 0, rows, 0, tokens);
          pp.form.gemm(pp.args(got.data()), 0, rows, 0, tokens);
          const double tol_per_m = (static_cast<double>(n) / packed_step_elems(t) + 16) * 0x1p-24;
          expect_within_tolerance(p, want, got, tol_per_m);
        }
      }
    }
  }
  if (cpu_has_avx2_fma_f16c()) {
    EXPECT_GT(forms, 0) << "no packed layout on an AVX2 machine";
  }
}

// The VNNI table's products (either vpdpbusd form) give the AVX2 table's bits: the same exact
// integer dot per block (vpdpbusd instead of maddubs + add + madd), then the same float operations.
// Covers 1..9 tokens (every tile size and the one- and two-token chains) and a partial panel; the
// quantized random rows reach their end codes (q4_0's 0, q8_0's +-127) in every block; q4_K
// and q5_K are taken at 1024 columns, their super-blocks being 256.
TEST(PackedGemm, VnniGivesTheAvx2Bits) {
  const KernelTable* avx2 = available()[1];
  const KernelTable* vnni = available()[2];
  if (vnni == nullptr) GTEST_SKIP() << "this CPU has neither AVX-VNNI nor AVX512-VNNI";
  ASSERT_NE(avx2, nullptr);
  int compared = 0;
  for (DType t : kPackedTypes) {
    if (ops_of(*vnni, t).packed.gemm == ops_of(*avx2, t).packed.gemm) continue;
    ++compared;
    for (const float scale : {1.0f, 1e-3f}) {
      const Problem p(t, is_k_quant(t) ? 1024 : 1024 + 64, 3 * 8 + 5, 9, 21, scale);
      const PackedProblem pp(p, *avx2);
      for (int64_t tokens = 1; tokens <= p.tokens; ++tokens) {
        for (const int mode : kDecodeReadModes) {
          const DecodeReads setting(mode);
          std::vector<float> want(p.y_size(), NAN), got(p.y_size(), NAN);
          ops_of(*avx2, t).packed.gemm(pp.args(want.data()), 0, p.rows, 0, tokens);
          ops_of(*vnni, t).packed.gemm(pp.args(got.data()), 0, p.rows, 0, tokens);
          EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0)
              << dtype_name(t) << " tokens=" << tokens << " scale=" << scale << " mode=" << mode
              << " rows=" << p.rows;
        }
      }
    }
  }
  EXPECT_GT(compared, 0) << vnni->isa << " replaces no packed product";
}

// The avx512_vnni table's packed products give the AVX2 table's bits though they read other
// layouts (Q4_0 in panels of 16 rows): each table packs the same rows its own way. Covers 1..27
// tokens (whole 6-token tiles, and every rest), a partial last panel (for F16 ones that end in
// its first and second sub-panels, lone 16-row tiles, and one that ends in its fourth, a 64-row
// tile with a partial last quarter), F16 rows of odd length over a partial last chunk, and
// decode with the prefetches on and off, in 512-bit registers and halves (and the AVX2 side in
// pairs and alone); Q4_0's and Q8_0's 34 blocks a row make runs of 15 and 8 and a rest.
TEST(PackedGemm, Avx512GivesTheAvx2Bits) {
  const KernelTable* avx2 = available()[1];
  const KernelTable* evex = available()[2];
  const KernelTable* wide = available()[3];
  if (wide == nullptr) GTEST_SKIP() << "this CPU lacks AVX512F/BW/VL/VNNI";
  ASSERT_NE(avx2, nullptr);
  ASSERT_NE(evex, nullptr);
  int compared = 0;
  for (DType t : kPackedTypes) {
    const TypeOps::Packed& form = ops_of(*wide, t).packed;
    // Types the AVX2 tables do not pack (Q5_K) have no AVX2 bits to give.
    if (form.gemm == ops_of(*evex, t).packed.gemm || ops_of(*avx2, t).packed.gemm == nullptr) {
      continue;
    }
    ++compared;
    for (const auto& [scale, last_rows] :
         {std::pair{1.0f, 5}, {1e-3f, 5}, {1.0f, 21}, {1.0f, 53}}) {
      const int64_t n = is_half(t) ? 1024 + 64 + 7 : is_k_quant(t) ? 1024 : 1024 + 64;
      const Problem p(t, n, 2 * form.panel_rows + last_rows, 27, 23, scale);
      const PackedProblem pa(p, *avx2), pw(p, *wide);
      for (int64_t tokens = 1; tokens <= p.tokens; ++tokens) {
        for (const int mode : kDecodeReadModes) {
          const DecodeReads setting(mode);
          std::vector<float> want(p.y_size(), NAN), got(p.y_size(), NAN);
          ops_of(*avx2, t).packed.gemm(pa.args(want.data()), 0, p.rows, 0, tokens);
          form.gemm(pw.args(got.data()), 0, p.rows, 0, tokens);
          EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0)
              << dtype_name(t) << " tokens=" << tokens << " scale=" << scale << " mode=" << mode
              << " rows=" << p.rows;
        }
      }
    }
  }
  EXPECT_GT(compared, 0) << wide->isa << " replaces no packed product";
}

// Panel-aligned row pieces and any token pieces (as threads and batches split them), and each
// token alone (one-token products one panel at a time and two panels at a time), give the bits
// of one call over everything.
TEST(PackedGemm, ResultsDoNotDependOnRangesOrBatch) {
  for (const KernelTable* k : tables()) {
    for (DType t : kPackedTypes) {
      const TypeOps::Packed& form = ops_of(*k, t).packed;
      if (form.panel_rows == 0) continue;
      const int64_t n = is_k_quant(t) ? 1024 : 1024 + 64, rows = 3 * form.panel_rows + 5;
      const int64_t tokens = 11;
      const Problem p(t, n, rows, tokens, 9, 1.0f);
      const PackedProblem pp(p, *k);
      std::vector<float> whole(p.y_size(), NAN), pieces(p.y_size(), NAN), single(p.y_size(), NAN);
      form.gemm(pp.args(whole.data()), 0, rows, 0, tokens);
      const int64_t row_cuts[] = {0, form.panel_rows, 3 * form.panel_rows, rows};
      const int64_t token_cuts[] = {0, 1, 6, tokens};
      for (int ri = 0; ri < 3; ++ri) {
        for (int ti = 0; ti < 3; ++ti) {
          form.gemm(pp.args(pieces.data()), row_cuts[ri], row_cuts[ri + 1], token_cuts[ti],
                    token_cuts[ti + 1]);
        }
      }
      EXPECT_EQ(std::memcmp(whole.data(), pieces.data(), whole.size() * sizeof(float)), 0)
          << k->isa << " " << dtype_name(t);
      for (const int mode : kDecodeReadModes) {
        const DecodeReads setting(mode);
        std::fill(single.begin(), single.end(), NAN);
        for (int64_t j = 0; j < tokens; ++j) form.gemm(pp.args(single.data()), 0, rows, j, j + 1);
        // Row pieces too: a lone first panel, a pair, then a lone cut panel.
        std::fill(pieces.begin(), pieces.end(), NAN);
        for (int64_t j = 0; j < tokens; ++j) {
          for (int ri = 0; ri < 3; ++ri) {
            form.gemm(pp.args(pieces.data()), row_cuts[ri], row_cuts[ri + 1], j, j + 1);
          }
        }
        EXPECT_EQ(std::memcmp(whole.data(), single.data(), whole.size() * sizeof(float)), 0)
            << k->isa << " " << dtype_name(t) << " decode mode " << mode;
        EXPECT_EQ(std::memcmp(whole.data(), pieces.data(), whole.size() * sizeof(float)), 0)
            << k->isa << " " << dtype_name(t) << " decode mode " << mode << ", row pieces";
      }
    }
  }
}

// A row's result does not depend on the rows packed beside it: the same row in another panel
// position (another slice of the matrix, as tensor parallelism cuts it) gives the same bits.
TEST(PackedGemm, RowBitsDoNotDependOnItsPanel) {
  for (const KernelTable* k : tables()) {
    for (DType t : kPackedTypes) {
      const TypeOps::Packed& form = ops_of(*k, t).packed;
      if (form.panel_rows == 0) continue;
      const int64_t n = is_k_quant(t) ? 512 : 256, rows = 2 * form.panel_rows, tokens = 3;
      const Problem p(t, n, rows, tokens, 13, 1.0f);
      Problem shifted = p;  // the same rows moved down by 3 (the first 3 rows: row 0 again)
      shifted.w.assign(p.w.size(), 0);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t from = r < 3 ? 0 : r - 3;
        std::memcpy(shifted.w.data() + r * p.w_stride, p.w.data() + from * p.w_stride, p.w_stride);
      }
      const PackedProblem a(p, *k), b(shifted, *k);
      std::vector<float> ya(p.y_size(), NAN), yb(p.y_size(), NAN);
      form.gemm(a.args(ya.data()), 0, rows, 0, tokens);
      form.gemm(b.args(yb.data()), 0, rows, 0, tokens);
      for (int64_t j = 0; j < tokens; ++j) {
        for (int64_t r = 0; r + 3 < rows; ++r) {
          EXPECT_EQ(ya[j * (rows + 3) + r], yb[j * (rows + 3) + r + 3])
              << k->isa << " " << dtype_name(t) << " row " << r << " token " << j;
        }
      }
    }
  }
}

// The packed twin of Gemm.Q8_0WeightMinus128: a -128 code (valid in a file) is taken as -128
// by the packed Q8_0 gemm too, in full panels and in the padded last one, for one token
// (decode) and ten in one call (a whole token tile and a rest of a size the generic tests
// do not make).
TEST(PackedGemm, Q8_0WeightMinus128) {
  Problem p(DType::kQ8_0, 64, 11, 11, 17, 1.0f);
  for (int64_t r = 0; r < p.rows; ++r) {
    auto* qs = p.w.data() + r * p.w_stride;
    // Rows alternate all -128 codes with a -128 at every other code among the random ones.
    for (int b = 0; b < 2; ++b) {
      for (int e = 0; e < 32; ++e) {
        if (r % 2 == 0 || e % 2 == 0) qs[b * 34 + 2 + e] = 0x80;
      }
    }
    ops_of(reference(), DType::kQ8_0).to_float(qs, &p.wf[r * p.n], p.n);
  }
  for (const KernelTable* k : tables()) {
    if (ops_of(*k, DType::kQ8_0).packed.panel_rows == 0) continue;
    const PackedProblem pp(p, *k);
    std::vector<float> want(p.y_size(), NAN), got(p.y_size(), NAN);
    ops_of(reference(), DType::kQ8_0).gemm(p.args(want.data()), 0, p.rows, 0, p.tokens);
    pp.form.gemm(pp.args(got.data()), 0, p.rows, 0, 1);
    pp.form.gemm(pp.args(got.data()), 0, p.rows, 1, p.tokens);
    for (int64_t j = 0; j < p.tokens; ++j) {
      for (int64_t r = 0; r < p.rows; ++r) {
        const double tol = (64.0 / 32 + 16) * 0x1p-24 * p.magnitude(r, j);
        EXPECT_NEAR(got[j * (p.rows + 3) + r], want[j * (p.rows + 3) + r], tol)
            << k->isa << " token " << j << " row " << r;
      }
    }
  }
}

// The packed F16 (and BF16) prompt path takes tokens in blocks (256) and columns in chunks (256
// on AVX2, 128 on AVX-512; the sums start in the first, wait in a side buffer between chunks, reach
// y in the last): a prompt longer than a block, over chunks of which the last is partial (3 of 256,
// 5 of 128), on two whole panels (the AVX-512 walk takes each through all its chunks before the
// next, reusing the side buffer) and a partial last one, gives every token the bits of its
// one-token (decode) call and leaves y's padding alone.
TEST(PackedGemm, F16LongPromptMatchesOneTokenAtATime) {
  for (const KernelTable* k : tables()) {
    for (const DType t : {DType::kF16, DType::kBF16}) {
      SCOPED_TRACE(dtype_name(t));
      const TypeOps::Packed& form = ops_of(*k, t).packed;
      if (form.panel_rows == 0) continue;
      const int64_t n = 600, rows = 2 * form.panel_rows + 5, tokens = 300;
      const Problem p(t, n, rows, tokens, 17, 1.0f);
      const PackedProblem pp(p, *k);
      std::vector<float> whole(p.y_size(), NAN), single(p.y_size(), NAN), want(p.y_size(), NAN);
      form.gemm(pp.args(whole.data()), 0, rows, 0, tokens);
      for (int64_t j = 0; j < tokens; ++j) form.gemm(pp.args(single.data()), 0, rows, j, j + 1);
      EXPECT_EQ(std::memcmp(whole.data(), single.data(), whole.size() * sizeof(float)), 0)
          << k->isa;
      reference_gemm(t, p.args(want.data()), 0, rows, 0, tokens);
      const double tol_per_m = (static_cast<double>(n) + 16) * 0x1p-24;
      for (int64_t j = 0; j < tokens; ++j) {
        for (int64_t r = 0; r < rows + 3; ++r) {
          const float g = whole[j * (rows + 3) + r];
          if (r >= rows) {
            ASSERT_TRUE(std::isnan(g))
                << k->isa << " padding written at token " << j << " row " << r;
            continue;
          }
          ASSERT_NEAR(g, want[j * (rows + 3) + r], tol_per_m * p.magnitude(r, j) + 1e-30)
              << k->isa << " token " << j << " row " << r;
        }
      }
    }
  }
}

// The packed K-quant forms add codes in int16 before the scales: their largest codes (Q5_K's
// 31: every fifth bit set), scales and mins (Q2_K's 15 and 15, whose nibbles the packed form
// splits) against activations of -128 (the largest |q| Q8_K makes) must not overflow.
TEST(PackedGemm, KQuantExtremesDoNotOverflow) {
  for (const KernelTable* k : tables()) {
    for (DType t : {DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K}) {
      const TypeOps::Packed& form = ops_of(*k, t).packed;
      if (form.panel_rows == 0) continue;
      Problem p(t, 512, form.panel_rows + 1, 3, 17, 1.0f);
      for (int64_t r = 0; r < p.rows; ++r) {
        uint8_t* row = p.w.data() + r * p.w_stride;
        for (int64_t b = 0; b < p.n / kQK_K; ++b) {
          if (t == DType::kQ4_K) {
            auto* x = reinterpret_cast<BlockQ4_K*>(row) + b;
            std::memset(x->scales, 0xFF, sizeof x->scales);  // every scale and min 63
            std::memset(x->qs, 0xFF, sizeof x->qs);          // every code 15
          } else if (t == DType::kQ2_K) {
            auto* x = reinterpret_cast<BlockQ2_K*>(row) + b;
            std::memset(x->scales, 0xFF, sizeof x->scales);  // every scale and min 15
            std::memset(x->qs, 0xFF, sizeof x->qs);          // every code 3
          } else if (t == DType::kQ3_K) {
            auto* x = reinterpret_cast<BlockQ3_K*>(row) + b;
            std::memset(x->scales, 0xFF, sizeof x->scales);  // every scale 63 - 32
            std::memset(x->qs, 0xFF, sizeof x->qs);          // every code 3 + 4: 7
            std::memset(x->hmask, 0xFF, sizeof x->hmask);
          } else if (t == DType::kQ5_K) {
            auto* x = reinterpret_cast<BlockQ5_K*>(row) + b;
            std::memset(x->scales, 0xFF, sizeof x->scales);
            std::memset(x->qs, 0xFF, sizeof x->qs);  // every code 31
            std::memset(x->qh, 0xFF, sizeof x->qh);
          } else {
            auto* x = reinterpret_cast<BlockQ6_K*>(row) + b;
            std::memset(x->ql, 0xFF, sizeof x->ql);  // every code 63
            std::memset(x->qh, 0xFF, sizeof x->qh);
            for (int j = 0; j < 16; ++j) x->scales[j] = static_cast<int8_t>(j % 2 ? 127 : -128);
          }
        }
        ops_of(reference(), t).to_float(row, &p.wf[r * p.n], p.n);
      }
      for (int64_t j = 0; j < p.tokens; ++j) {
        auto* a = reinterpret_cast<BlockQ8_K*>(p.a.data() + j * p.a_stride);
        for (int64_t b = 0; b < p.n / kQK_K; ++b) {
          // Token 0: every code -128; the others: -128 but for a +127 every (j + 2) codes.
          for (int e = 0; e < kQK_K; ++e)
            a[b].qs[e] = static_cast<int8_t>(j && e % (j + 2) == 0 ? 127 : -128);
          for (int s = 0; s < kQK_K / 16; ++s) {
            int sum = 0;
            for (int e = 0; e < 16; ++e) sum += a[b].qs[16 * s + e];
            a[b].bsums[s] = static_cast<int16_t>(sum);
          }
        }
        ops_of(reference(), DType::kQ8_K).to_float(a, &p.af[j * p.n], p.n);
      }
      const PackedProblem pp(p, *k);
      std::vector<float> want(p.y_size(), NAN), got(p.y_size(), NAN);
      reference_gemm(t, p.args(want.data()), 0, p.rows, 0, p.tokens);
      form.gemm(pp.args(got.data()), 0, p.rows, 0, p.tokens);
      for (int64_t j = 0; j < p.tokens; ++j) {
        for (int64_t r = 0; r < p.rows; ++r) {
          const double tol = (512.0 / 32 + 16) * 0x1p-24 * p.magnitude(r, j);
          EXPECT_NEAR(got[j * (p.rows + 3) + r], want[j * (p.rows + 3) + r], tol)
              << k->isa << " " << dtype_name(t) << " row " << r << " token " << j;
        }
      }
    }
  }
}

// The packed Q4_0, Q4_1, Q5_0 and Q5_1 forms add a block's products in int16 on the AVX2
// tables' maddubs path: their largest codes (15; with every fifth bit set, 31) against
// activations of all -127 (the largest |q| the Q8_0 and Q8_1 quantizers make) must not overflow,
// one token at a time (decode) and several (prefill).
TEST(PackedGemm, Block32ExtremesDoNotOverflow) {
  for (const KernelTable* k : tables()) {
    for (DType t : {DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1}) {
      const TypeOps::Packed& form = ops_of(*k, t).packed;
      if (form.panel_rows == 0) continue;
      const DType at = ops_of(reference(), t).vec_dot_type;
      Problem p(t, 256, form.panel_rows + 1, 5, 17, 1.0f);
      const size_t block = row_bytes(t, kQK);
      for (int64_t r = 0; r < p.rows; ++r) {
        uint8_t* row = p.w.data() + r * p.w_stride;
        // Every byte after the scale (and the min) 0xFF: codes 15, fifth bits 1.
        const size_t head = t == DType::kQ4_1 || t == DType::kQ5_1 ? 4 : 2;
        for (int64_t b = 0; b < p.n / kQK; ++b)
          std::memset(row + b * block + head, 0xFF, block - head);
        ops_of(reference(), t).to_float(row, &p.wf[r * p.n], p.n);
      }
      for (int64_t j = 0; j < p.tokens; ++j) {
        // Token 0: every value -1 (codes -127); the others: -1 but for a +1 every (j + 2).
        std::vector<float> x(static_cast<size_t>(p.n));
        for (int64_t e = 0; e < p.n; ++e) x[e] = j && e % (j + 2) == 0 ? 1.0f : -1.0f;
        ops_of(reference(), at).from_float(x.data(), p.a.data() + j * p.a_stride, p.n);
        ops_of(reference(), at).to_float(p.a.data() + j * p.a_stride, &p.af[j * p.n], p.n);
      }
      const PackedProblem pp(p, *k);
      std::vector<float> want(p.y_size(), NAN), got(p.y_size(), NAN), single(p.y_size(), NAN);
      reference_gemm(t, p.args(want.data()), 0, p.rows, 0, p.tokens);
      form.gemm(pp.args(got.data()), 0, p.rows, 0, p.tokens);
      for (int64_t j = 0; j < p.tokens; ++j) form.gemm(pp.args(single.data()), 0, p.rows, j, j + 1);
      for (int64_t j = 0; j < p.tokens; ++j) {
        for (int64_t r = 0; r < p.rows; ++r) {
          const double tol = (256.0 / 32 + 16) * 0x1p-24 * p.magnitude(r, j);
          const size_t i = static_cast<size_t>(j * (p.rows + 3) + r);
          EXPECT_NEAR(got[i], want[i], tol)
              << k->isa << " " << dtype_name(t) << " row " << r << " token " << j;
          EXPECT_NEAR(single[i], want[i], tol)
              << k->isa << " " << dtype_name(t) << " decode, row " << r << " token " << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace cohort::kernels
