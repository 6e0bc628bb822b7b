// Matrix products of a weight matrix with a batch of activation vectors, threaded over
// output rows: the driver every linear layer uses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/thread_pool.h"
#include "kernels/kernels.h"

namespace cohort::kernels {

// A non-owning rows x cols weight matrix in one GGUF type. Row r starts at
// data + r * row_stride bytes; cols is a multiple of the type's block size. row_stride is
// row_bytes(type, cols) for a whole tensor and larger for a column slice of one.
struct WeightMatrix {
  const void* data = nullptr;
  DType type = DType::kF32;
  int64_t rows = 0;
  int64_t cols = 0;
  size_t row_stride = 0;
  // Optional: the same matrix in its type's packed layout (TypeOps::Packed of the table
  // that packed it), panel p at packed + p * panel_stride; data stays valid for readers of
  // single rows. matmul() uses the packed form when there is one. Slices drop it (packing
  // happens after a shard's slicing).
  const void* packed = nullptr;
  size_t panel_stride = 0;
  // Of a packed matrix: packed as column slices of slice_cols columns each (pack_slice_cols()),
  // slice s a packed matrix of its own at packed + s * slice_stride, whose products add up
  // (GemmArgs::accumulate); slice_cols == cols for one slice.
  int64_t slice_cols = 0;
  size_t slice_stride = 0;

  // Rows [r0, r1) of this matrix.
  WeightMatrix row_slice(int64_t r0, int64_t r1) const;
  // Columns [c0, c1) of this matrix; c0 and c1 must be block-aligned.
  WeightMatrix col_slice(int64_t c0, int64_t c1) const;
};

// The widest column slice a packed matrix is kept in (0: none, every matrix whole), 2048 by
// default. A one-token product streams each panel of rows once while every panel rereads
// the token's activations; past a few KiB the stream pushes those out of L1 between panels.
// On the Zen 4 VM of stop 24 (decode_layers_bench, 1B q4_0, one thread) the FFN down
// projection's 8192-column panels read 55-72% of a plain read and the 2048-column ones 79-89%;
// with the activations confined to 2 KiB the down projection read as fast as the others. A
// matrix wider than this, whose width it divides and whose type's gemm accumulates
// (TypeOps::Packed::accumulates), packs as slices of this width; the products are the same
// bits. Read when packing: set it before packed_bytes() and pack(), not between.
int64_t pack_slice_cols();
void set_pack_slice_cols(int64_t cols);

// Bytes of w in its type's packed layout in table k; 0 when k has none for the type.
size_t packed_bytes(const KernelTable& k, const WeightMatrix& w);

// Packs w (unpacked) into dst, packed_bytes(k, w) bytes, on every thread of pool, and
// returns w with its packed form set to dst. dst must outlive every use of the result.
WeightMatrix pack(const KernelTable& k, ThreadPool& pool, const WeightMatrix& w, void* dst);

// Bytes of activation workspace matmul() needs for n_tokens vectors against w: the converted
// activations and, for a type whose prompts lay them out once per product
// (TypeOps::Packed::prompt_layout), that layout.
size_t matmul_workspace_bytes(const KernelTable& k, const WeightMatrix& w, int64_t n_tokens);

// y[t * w.rows + r] = sum_c w[r][c] * x[t * x_stride + c], for t < n_tokens, r < w.rows.
// workspace holds matmul_workspace_bytes() bytes. Runs on every thread of pool. Takes the
// type's gemm where it has one, for any number of tokens (one token included), else vec_dot
// per pair. gemm's result for a (row, token) depends on nothing else, so a token gets the
// same bits alone or in any batch (batched serving gives each request what it gets alone),
// and with any number of threads; for one token gemm is as fast as vec_dot (memory-bound).
void matmul(const KernelTable& k, ThreadPool& pool, const WeightMatrix& w, const float* x,
            int64_t x_stride, int64_t n_tokens, float* y, void* workspace);

// One product of several that share their input: y[t * w->rows + r] = sum_c w[r][c] x[t][c].
struct MatmulOutput {
  const WeightMatrix* w = nullptr;
  float* y = nullptr;
};
inline constexpr size_t kMaxSharedOutputs = 4;

// matmul() of each of outs (1..kMaxSharedOutputs) with the same x: the same bits as separate
// calls. When their matrices have one type and width (a layer's q/k/v, or gate/up), the
// activations are converted once and all the products run as one fork-join over their rows
// together, which saves a step's barriers and lets each thread stream its share of the
// weights without waiting between matrices (decode runs ~100 products per token); the
// workspace is matmul_workspace_bytes() of the first.
void matmul_shared_input(const KernelTable& k, ThreadPool& pool, std::span<const MatmulOutput> outs,
                         const float* x, int64_t x_stride, int64_t n_tokens, void* workspace);

}  // namespace cohort::kernels
