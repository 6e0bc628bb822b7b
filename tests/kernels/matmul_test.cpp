// kernels::matmul and matmul_shared_input on packed and row-major weights: products that
// share an input give, fused, the bits of separate calls (whatever the types, widths and
// packing), on 1 and 2 threads; a balanced split (split_stealing) gives the static split's
// bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/thread_pool.h"
#include "kernel_test_util.h"
#include "kernels/matmul.h"
#include "tensor/quantize.h"

namespace cohort::kernels {
namespace {

using testing::ops_of;

// A rows x cols matrix of type t with random weights, packed when pack and the table has a
// packed form for t.
struct Matrix {
  std::vector<uint8_t> data, panels;
  WeightMatrix w;

  Matrix(const KernelTable& k, ThreadPool& pool, DType t, int64_t rows, int64_t cols, uint64_t seed,
         bool pack_it) {
    Rng rng(seed);
    const size_t rb = row_bytes(t, cols);
    data.resize(rb * rows);
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (float& v : row) v = rng.normal();
      quantize_row(t, row.data(), data.data() + r * rb, cols);
    }
    w.data = data.data();
    w.type = t;
    w.rows = rows;
    w.cols = cols;
    w.row_stride = rb;
    if (pack_it && packed_bytes(k, w) > 0) {
      panels.resize(packed_bytes(k, w));
      w = pack(k, pool, w, panels.data());
    }
  }
};

std::vector<float> inputs(int64_t n_tokens, int64_t cols) {
  Rng rng(99);
  std::vector<float> x(static_cast<size_t>(n_tokens * cols));
  for (float& v : x) v = rng.normal();
  return x;
}

TEST(MatmulSharedInput, FusedEqualsSeparateCalls) {
  const KernelTable& k = best();
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ4_0, DType::kQ4_1,
                    DType::kQ5_0, DType::kQ5_1, DType::kQ8_0, DType::kQ4_K, DType::kQ2_K,
                    DType::kQ3_K, DType::kQ5_K, DType::kQ6_K}) {
      for (bool packed : {false, true}) {
        SCOPED_TRACE(std::string(dtype_name(t)) + (packed ? " packed" : " row-major") + " " +
                     std::to_string(threads) + " threads");
        const int64_t cols = 512;
        // A q/k/v-like set: rows not multiples of a panel, one matrix of a single row.
        const Matrix a(k, pool, t, 37, cols, 1, packed), b(k, pool, t, 16, cols, 2, packed),
            c(k, pool, t, 1, cols, 3, packed);
        for (int64_t n_tokens : {int64_t{1}, int64_t{9}}) {
          const std::vector<float> x = inputs(n_tokens, cols);
          std::vector<uint8_t> ws(matmul_workspace_bytes(k, a.w, n_tokens));
          std::vector<float> ya(37 * n_tokens), yb(16 * n_tokens), yc(n_tokens);
          matmul(k, pool, a.w, x.data(), cols, n_tokens, ya.data(), ws.data());
          matmul(k, pool, b.w, x.data(), cols, n_tokens, yb.data(), ws.data());
          matmul(k, pool, c.w, x.data(), cols, n_tokens, yc.data(), ws.data());
          std::vector<float> fa(ya.size(), NAN), fb(yb.size(), NAN), fc(yc.size(), NAN);
          const MatmulOutput outs[] = {{&a.w, fa.data()}, {&b.w, fb.data()}, {&c.w, fc.data()}};
          matmul_shared_input(k, pool, outs, x.data(), cols, n_tokens, ws.data());
          EXPECT_EQ(std::memcmp(ya.data(), fa.data(), ya.size() * sizeof(float)), 0);
          EXPECT_EQ(std::memcmp(yb.data(), fb.data(), yb.size() * sizeof(float)), 0);
          EXPECT_EQ(std::memcmp(yc.data(), fc.data(), yc.size() * sizeof(float)), 0);
        }
      }
    }
  }
}

// Outputs of different types or widths cannot share converted activations: they run as
// separate calls and still give those calls' bits.
TEST(MatmulSharedInput, MixedTypesFallBackToSeparateCalls) {
  const KernelTable& k = best();
  ThreadPool pool(2);
  const int64_t cols = 256, n_tokens = 3;
  const Matrix a(k, pool, DType::kQ4_0, 24, cols, 4, true),
      b(k, pool, DType::kQ8_0, 8, cols, 5, true);
  const std::vector<float> x = inputs(n_tokens, cols);
  std::vector<uint8_t> ws(
      std::max(matmul_workspace_bytes(k, a.w, n_tokens), matmul_workspace_bytes(k, b.w, n_tokens)));
  std::vector<float> ya(24 * n_tokens), yb(8 * n_tokens), fa(ya.size()), fb(yb.size());
  matmul(k, pool, a.w, x.data(), cols, n_tokens, ya.data(), ws.data());
  matmul(k, pool, b.w, x.data(), cols, n_tokens, yb.data(), ws.data());
  const MatmulOutput outs[] = {{&a.w, fa.data()}, {&b.w, fb.data()}};
  matmul_shared_input(k, pool, outs, x.data(), cols, n_tokens, ws.data());
  EXPECT_EQ(std::memcmp(ya.data(), fa.data(), ya.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(yb.data(), fb.data(), yb.size() * sizeof(float)), 0);
}

// Restores split_stealing() when a test ends, however it ends.
struct SplitStealingSetting {
  bool saved = split_stealing();
  ~SplitStealingSetting() { set_split_stealing(saved); }
};

// Threads that take chunks of each other's shares (ThreadPool::run_stealing) compute every
// row as one thread does: the bits of the static split, on matrices of many chunks (a packed
// panel being 9-256 KiB here), rows not whole panels, fused and alone.
TEST(MatmulSplit, StealingGivesTheStaticSplitsBits) {
  const KernelTable& k = best();
  const SplitStealingSetting restore;
  ThreadPool one(1), two(2), three(3);
  for (DType t :
       {DType::kF16, DType::kBF16, DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1,
        DType::kQ8_0, DType::kQ4_K, DType::kQ2_K, DType::kQ3_K, DType::kQ5_K, DType::kQ6_K}) {
    for (bool packed : {false, true}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + (packed ? " packed" : " row-major"));
      const int64_t cols = 2048;
      const Matrix a(k, one, t, 1000, cols, 7, packed), b(k, one, t, 136, cols, 8, packed);
      for (int64_t n_tokens : {int64_t{1}, int64_t{5}}) {
        const std::vector<float> x = inputs(n_tokens, cols);
        std::vector<uint8_t> ws(matmul_workspace_bytes(k, a.w, n_tokens));
        std::vector<float> ya(1000 * n_tokens), yb(136 * n_tokens);
        set_split_stealing(false);
        matmul(k, two, a.w, x.data(), cols, n_tokens, ya.data(), ws.data());
        matmul(k, two, b.w, x.data(), cols, n_tokens, yb.data(), ws.data());
        set_split_stealing(true);
        for (ThreadPool* pool : {&two, &three}) {
          std::vector<float> sa(ya.size(), NAN), fa(ya.size(), NAN), fb(yb.size(), NAN);
          matmul(k, *pool, a.w, x.data(), cols, n_tokens, sa.data(), ws.data());
          const MatmulOutput outs[] = {{&a.w, fa.data()}, {&b.w, fb.data()}};
          matmul_shared_input(k, *pool, outs, x.data(), cols, n_tokens, ws.data());
          EXPECT_EQ(std::memcmp(ya.data(), sa.data(), ya.size() * sizeof(float)), 0);
          EXPECT_EQ(std::memcmp(ya.data(), fa.data(), ya.size() * sizeof(float)), 0);
          EXPECT_EQ(std::memcmp(yb.data(), fb.data(), yb.size() * sizeof(float)), 0);
        }
      }
    }
  }
}

// Restores pack_slice_cols() when a test ends, however it ends.
struct PackSliceSetting {
  int64_t saved = pack_slice_cols();
  ~PackSliceSetting() { set_pack_slice_cols(saved); }
};

// A wide matrix packed as column slices (pack_slice_cols) gives the bits of the same matrix
// packed whole, one token and a batch (tiles of 4 and a rest), rows not whole panels, on 1
// and 2 threads, for every type whose gemm accumulates; F16 and matrices the width does not
// divide stay whole. Fails with a slice that starts its sums from zero.
TEST(MatmulSlices, SlicedPackingGivesTheWholeMatrixsBits) {
  const KernelTable& k = best();
  const PackSliceSetting restore;
  ThreadPool one(1), two(2);
  for (DType t :
       {DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kQ8_0, DType::kQ4_K,
        DType::kQ3_K, DType::kQ5_K, DType::kQ6_K, DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const bool accumulates = ops_of(k, t).packed.accumulates;
    const int64_t cols = 1536, rows = 44;
    set_pack_slice_cols(0);
    const Matrix whole(k, one, t, rows, cols, 21, true);
    EXPECT_EQ(whole.w.slice_cols, cols);
    set_pack_slice_cols(512);
    const Matrix sliced(k, one, t, rows, cols, 21, true);
    EXPECT_EQ(sliced.w.slice_cols, accumulates ? 512 : cols);
    EXPECT_GE(sliced.panels.size(), whole.panels.size());
    set_pack_slice_cols(1024);  // does not divide 1536
    EXPECT_EQ(Matrix(k, one, t, rows, cols, 21, true).w.slice_cols, cols);
    for (ThreadPool* pool : {&one, &two}) {
      for (int64_t n_tokens : {int64_t{1}, int64_t{7}}) {
        const std::vector<float> x = inputs(n_tokens, cols);
        std::vector<uint8_t> ws(matmul_workspace_bytes(k, whole.w, n_tokens));
        std::vector<float> yw(rows * n_tokens), ys(yw.size(), NAN);
        matmul(k, *pool, whole.w, x.data(), cols, n_tokens, yw.data(), ws.data());
        matmul(k, *pool, sliced.w, x.data(), cols, n_tokens, ys.data(), ws.data());
        EXPECT_EQ(std::memcmp(yw.data(), ys.data(), yw.size() * sizeof(float)), 0)
            << n_tokens << " tokens, " << pool->size() << " threads";
        // Sliced outputs fuse slice by slice; beside a whole one they run apart. Either way
        // they give their bits.
        std::vector<float> f1(yw.size(), NAN), f2(yw.size(), NAN), f3(yw.size(), NAN);
        const MatmulOutput mixed[] = {{&sliced.w, f1.data()}, {&whole.w, f2.data()}};
        matmul_shared_input(k, *pool, mixed, x.data(), cols, n_tokens, ws.data());
        EXPECT_EQ(std::memcmp(yw.data(), f1.data(), yw.size() * sizeof(float)), 0);
        EXPECT_EQ(std::memcmp(yw.data(), f2.data(), yw.size() * sizeof(float)), 0);
        std::fill(f1.begin(), f1.end(), NAN);
        const MatmulOutput both[] = {{&sliced.w, f1.data()}, {&sliced.w, f3.data()}};
        matmul_shared_input(k, *pool, both, x.data(), cols, n_tokens, ws.data());
        EXPECT_EQ(std::memcmp(yw.data(), f1.data(), yw.size() * sizeof(float)), 0);
        EXPECT_EQ(std::memcmp(yw.data(), f3.data(), yw.size() * sizeof(float)), 0);
      }
    }
  }
}

// A gemm reuses the terms it derived from a product's activations across that product's
// chunks (GemmArgs::a_version), never across products: a second product whose new
// activations land in the same workspace, for the same tokens, gives the bits it gives
// from a workspace of its own.
TEST(MatmulSplit, TermsFollowNewActivationsInTheSameWorkspace) {
  const KernelTable& k = best();
  ThreadPool pool(2);
  for (DType t : {DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kQ8_0,
                  DType::kQ4_K, DType::kQ2_K, DType::kQ3_K, DType::kQ5_K, DType::kQ6_K}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const int64_t cols = 2048, rows = 512;
    const Matrix a(k, pool, t, rows, cols, 11, true);
    for (int64_t n_tokens : {int64_t{1}, int64_t{3}}) {
      std::vector<float> x1 = inputs(n_tokens, cols), x2 = x1;
      for (float& v : x2) v = 0.5f - 2.f * v;
      std::vector<uint8_t> ws(matmul_workspace_bytes(k, a.w, n_tokens)), own(ws.size());
      std::vector<float> expect(rows * n_tokens), y1(expect.size()), y2(expect.size());
      matmul(k, pool, a.w, x2.data(), cols, n_tokens, expect.data(), own.data());
      matmul(k, pool, a.w, x1.data(), cols, n_tokens, y1.data(), ws.data());
      matmul(k, pool, a.w, x2.data(), cols, n_tokens, y2.data(), ws.data());
      EXPECT_NE(std::memcmp(y1.data(), expect.data(), y1.size() * sizeof(float)), 0);
      EXPECT_EQ(std::memcmp(y2.data(), expect.data(), y2.size() * sizeof(float)), 0);
    }
  }
}

// A product whose type lays its activations out once for all its threads
// (Packed::prompt_layout, the AVX-512 table's F16) gives the bits of one gemm call over every
// row and token that lays them out itself: on 1, 2 and 3 threads (the layout's tiles split
// three ways), for prompts of one tile, of several, and of more than one token block (300
// tokens).
TEST(MatmulPromptLayout, SharedLayoutGivesTheCallsBits) {
  const KernelTable& k = best();
  const TypeOps::Packed& p = ops_of(k, DType::kF16).packed;
  if (p.prompt_layout == nullptr)
    GTEST_SKIP() << "this table's F16 prompt reads its activations as they are";
  ThreadPool one(1);
  const int64_t cols = 320, rows = 200;  // cols: two chunks and a part; rows: a partial panel
  const Matrix a(k, one, DType::kF16, rows, cols, 23, true);
  ASSERT_NE(a.w.packed, nullptr);
  for (int64_t n_tokens : {int64_t{4}, int64_t{29}, int64_t{300}}) {
    SCOPED_TRACE(std::to_string(n_tokens) + " tokens");
    const std::vector<float> x = inputs(n_tokens, cols);
    GemmArgs g;
    g.n = cols;
    g.w = a.w.packed;
    g.w_stride = a.w.panel_stride;
    g.a = x.data();
    g.a_stride = cols * sizeof(float);
    std::vector<float> expect(rows * n_tokens);
    g.y = expect.data();
    g.y_stride = rows;
    p.gemm(g, 0, rows, 0, n_tokens);
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      // NaN bytes, so that anything of the layout left unwritten shows.
      std::vector<uint8_t> ws(matmul_workspace_bytes(k, a.w, n_tokens), 0xff);
      std::vector<float> y(expect.size(), NAN);
      matmul(k, pool, a.w, x.data(), cols, n_tokens, y.data(), ws.data());
      EXPECT_EQ(std::memcmp(y.data(), expect.data(), y.size() * sizeof(float)), 0)
          << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace cohort::kernels
