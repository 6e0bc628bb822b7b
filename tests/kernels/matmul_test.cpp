// kernels::matmul and matmul_shared_input on packed and row-major weights: products that
// share an input give, fused, the bits of separate calls (whatever the types, widths and
// packing), on 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <algorithm>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/thread_pool.h"
#include "kernels/matmul.h"
#include "tensor/quantize.h"

namespace cohort::kernels {
namespace {

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
    for (DType t :
         {DType::kF32, DType::kF16, DType::kQ4_0, DType::kQ8_0, DType::kQ4_K, DType::kQ6_K}) {
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

}  // namespace
}  // namespace cohort::kernels
