// What the AVX2 and AVX-512 prompt products of F16x64 panels (kernels/packed_layouts.h) share:
// how a chunk of a sub-panel's columns is named, found and asked for ahead. Both walk chunks
// of columns of one 16-row sub-panel at a time, converting the chunk to f32 once for all
// their token tiles. Everything here has internal linkage (an unnamed namespace), so each
// file compiles its own copy for its own ISA (see simd_avx512.h on why that matters).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/kernels.h"
#include "kernels/packed_layouts.h"

namespace cohort::kernels {
namespace {

// One chunk of a sub-panel: `cols` columns of halves from src (column c at f16x64_offset(0,
// c) from there), converted to f32 at wf (16 floats a column) by the first token tile that
// runs on it and read from there by the others.
struct F16Chunk {
  const uint8_t* src;
  float* wf;
  int64_t cols;
};

// Where column k of sub-panel q (rows 16q .. 16q + 15 of the matrix) starts. Chunks start at
// an even k, so the chunk's later columns follow at f16x64_offset(0, c) from there.
inline const uint8_t* f16_sub_panel_column(const GemmArgs& g, int64_t q, int64_t k) {
  return static_cast<const uint8_t*>(g.w) + (q / kF16SubPanels) * g.w_stride +
         f16x64_offset(q % kF16SubPanels, k);
}

// Asks for the chunk a prompt converts after chunk (q, k0) of `cols` columns, which depends on
// the walk (the constructor, in_group). It comes from memory: its lines (a column pair each,
// kF16PairBytes apart) are asked for into L2 (not L1, which the tiles' activations stream through)
// a few per token tile while this chunk's tiles run, which the first tile's conversion otherwise
// waits for (stop 17, 1B F16 pp128, 2 threads: 74-77 tok/s without, 81-83 with).
class F16NextChunk {
 public:
  // The AVX2 walk's (chunks outside, one sub-panel at a time inside): the same columns of
  // sub-panel q + 1, else the next chunk (up to chunk_cols columns) of the first, q_begin.
  F16NextChunk(const GemmArgs& g, int64_t q, int64_t q_begin, int64_t q_end, int64_t k0,
               int64_t cols, int64_t chunk_cols)
      : subs_(1) {
    const bool next_sub = q + 1 < q_end;
    const int64_t rest = g.n - k0 - cols;
    p_ =
        next_sub ? f16_sub_panel_column(g, q + 1, k0) : f16_sub_panel_column(g, q_begin, k0 + cols);
    const int64_t next_cols = next_sub ? cols : rest < chunk_cols ? rest : chunk_cols;
    lines_ = (next_cols + 1) / 2;
  }
  // The chunk after (q, k0) of `cols` columns where a prompt walks a group of `subs`
  // sub-panels [q, q + subs) of one panel through all its chunks before the next group (the
  // AVX-512 walk): the group's next chunk, else the next group's first (none from q_end on).
  // Each column pair's lines of the group's subs sub-panels (64 bytes apart) are asked for.
  static F16NextChunk in_group(const GemmArgs& g, int64_t q, int64_t q_end, int64_t k0,
                               int64_t cols, int64_t chunk_cols, int subs) {
    F16NextChunk next;
    next.subs_ = subs;
    const int64_t k = k0 + cols < g.n ? k0 + cols : 0;
    const int64_t nq = k == 0 ? q + subs : q;
    next.p_ = nq < q_end ? f16_sub_panel_column(g, nq, k) : nullptr;
    next.lines_ = nq < q_end ? (std::min(chunk_cols, g.n - k) + 1) / 2 : 0;
    return next;
  }
  // Asks for the next `count` column pairs' lines (fewer at the chunk's end).
  void ask(int64_t count) {
    for (const int64_t end = line_ + count < lines_ ? line_ + count : lines_; line_ < end;
         ++line_) {
      for (int s = 0; s < subs_; ++s) {
        _mm_prefetch(reinterpret_cast<const char*>(p_) + kF16PairBytes * line_ + 64 * s,
                     _MM_HINT_T1);
      }
    }
  }

 private:
  F16NextChunk() = default;
  const uint8_t* p_;
  int subs_;
  int64_t lines_;
  int64_t line_ = 0;
};

}  // namespace
}  // namespace cohort::kernels
